//! `charly check vnc ...`: each leaf as a [`vnc::Op`], run against the server its target names.

use std::io::BufRead;

use crate::cli::{VncCmd, VncTarget};
use crate::config::Settings;
use crate::context::{Ctx, Scope};
use crate::credentials::{Store, VNC_SERVICE};
use crate::engine::Engine;
use crate::error::CommandError;
use crate::report::Reply;
use crate::vnc::{self, Op, VncError, VncPasswd};

/// Runs a `check vnc` leaf.
///
/// # Errors
///
/// [`CommandError::Vnc`] (unreachable server, no port mapping, a wrong or missing password,
/// unsupported security, a bad key name or rfb params), [`CommandError::Usage`] for a
/// screenshot path outside the project over MCP.
pub(super) fn run(cmd: &VncCmd, ctx: &Ctx) -> Result<Reply, CommandError> {
    if let VncCmd::Passwd { target, instance, generate } = cmd {
        return passwd(ctx, target, instance.as_deref(), *generate);
    }
    let (on, op) = op_of(cmd, ctx)?;
    let timeout = on.timeout.into();
    let engine = Engine::podman(ctx.cancel_token()).knowing(crate::resolve::project_boxes(ctx.root()));
    let ca_file = match &on.ca_file {
        Some(f) => Some(super::arg_path(ctx, "ca_file", f)?),
        None => None,
    };
    if on.insecure {
        eprintln!("{}", charly::client::TlsOptions::INSECURE_WARNING);
    }
    let mut server = ctx.block_until_interrupted(async {
        vnc::resolve(&engine, &on.target, on.instance.as_deref(), on.vnc_addr.as_deref()).await
    })?;
    server.tls = charly::client::TlsOptions::new(ca_file, on.insecure);
    let store = Store::open(Settings::load(ctx.root()).map_err(|e| VncError::Usage(e.to_string()))?, false);
    let password = vnc::password(&store, &server);
    let reply = ctx.block_until_interrupted(async move {
        tokio::task::spawn_blocking(move || {
            let value = password.as_ref().map(|p| p.value.as_str());
            vnc::perform(&server, value, &op, timeout)
                .map_err(|e| e.with_password_from(password.as_ref().map(|p| p.from.as_str())))
        })
        .await
        .map_err(|e| VncError::Protocol(format!("the VNC worker ended: {e}")))?
    })?;
    Ok(reply)
}

fn op_of<'a>(cmd: &'a VncCmd, ctx: &Ctx) -> Result<(&'a VncTarget, Op), CommandError> {
    Ok(match cmd {
        VncCmd::Status(on) => (on, Op::Status),
        VncCmd::Screenshot { on, file } => {
            // The full path, as check.cdp.screenshot reports it (it gave the path as typed).
            let file = match file {
                Some(f) => Some(super::arg_path(ctx, "file", f)?),
                None => None,
            };
            let shown = file.as_ref().map(|f| f.display().to_string());
            (on, Op::Screenshot { file, shown })
        }
        VncCmd::Click { point, button } => (&point.on, Op::Click { x: point.x, y: point.y, button: *button }),
        VncCmd::Mouse(point) => (&point.on, Op::Mouse { x: point.x, y: point.y }),
        VncCmd::Type { on, text } => (on, Op::Type { text: text.clone() }),
        VncCmd::Key { on, key_name } => (on, Op::Key { name: key_name.clone() }),
        VncCmd::Rfb { on, method, params } => {
            (on, Op::Rfb { method: method.clone(), params: params.clone() })
        }
        VncCmd::Passwd { .. } => unreachable!("passwd is handled before"),
    })
}

fn passwd(ctx: &Ctx, target: &str, instance: Option<&str>, generate: bool) -> Result<Reply, CommandError> {
    // `.` has no instances: refused as every other leaf does (it stored `charly/vnc/.-2`).
    if target == "."
        && let Some(why) = crate::resolve::instance_on_local(instance)
    {
        return Err(VncError::Usage(why).into());
    }
    // A box that is not the project's would get a password no target ever reads.
    if target != "."
        && let Some(known) = crate::resolve::project_boxes(ctx.root())
        && let Some(names) = &known.names
        && !names.iter().any(|n| n == target)
    {
        return Err(VncError::Usage(format!(
            "passwd: box {target:?} is not a box of this project (its boxes: {}); name one of them, or `.` \
             for this machine's VNC server",
            if names.is_empty() { "none".to_owned() } else { names.join(", ") }
        ))
        .into());
    }
    // The key is the container's name: an instance no container can have (`../x`) is refused
    // as the lifecycle leaves refuse it.
    if target != "." {
        let t = crate::engine::Target::new(target, instance)
            .map_err(|e| VncError::Usage(format!("passwd: {e}")))?;
        // Keys collide as container names do (box `a-b` instance `c` and box `a` instance
        // `b-c` are both `a-b-c`): a password is not put over the one the container of
        // another box or instance reads. Without a container (or without podman) nothing
        // reads the key yet, and it is stored.
        let engine = Engine::podman(ctx.cancel_token());
        let owner = ctx.block(async { Ok::<_, CommandError>(engine.claimed(&t).await) })?;
        if let Err(crate::engine::EngineError::Claimed { problem, .. }) = owner {
            let key = vnc::credential_keys(target, instance).remove(0);
            return Err(VncError::Usage(format!(
                "passwd: {VNC_SERVICE}/{key} is the password container {} reads, and {problem}; nothing \
                 was stored. Use another instance name for this box, or name the container's own box \
                 and instance to change its password",
                t.container
            ))
            .into());
        }
    }
    // A served call's stdin is the protocol stream (stdio): never read it.
    if !generate && ctx.scope() == Scope::Served {
        return Err(VncError::Usage(
            "passwd: as a tool, give `generate: true` (the new password is in the result); a password of \
             your own is stored on a terminal, piped to `charly check vnc passwd TARGET`"
                .into(),
        )
        .into());
    }
    let key = vnc::credential_keys(target, instance).remove(0);
    let (password, generated) = if generate {
        let generated = generate_password()?;
        (generated.clone(), Some(generated))
    } else {
        let mut line = String::new();
        // Bounded: a password is 8 bytes; an endless stdin (`< /dev/zero`) is not read whole.
        std::io::Read::take(std::io::stdin().lock(), 1024)
            .read_line(&mut line)
            .map_err(|e| VncError::Usage(format!("reading stdin: {e}")))?;
        let line = line.trim_end_matches(['\n', '\r']).to_owned();
        if line.is_empty() {
            return Err(VncError::Usage(
                "passwd: no password on stdin; pipe one line, or use --generate".into(),
            )
            .into());
        }
        // Refused rather than stored: a longer one would look stronger than it is, and what
        // the server compares is only its first 8 bytes.
        if let Some(why) = vnc::auth::too_long(line.len()) {
            return Err(VncError::Usage(format!("passwd: {why}, or use --generate")).into());
        }
        (line, None)
    };
    let mut store =
        Store::open(Settings::load(ctx.root()).map_err(|e| VncError::Usage(e.to_string()))?, false);
    store
        .set(VNC_SERVICE, &key, &password)
        .map_err(|e| VncError::Usage(format!("passwd: storing {VNC_SERVICE}/{key}: {e}")))?;
    let report =
        VncPasswd { stored: format!("{VNC_SERVICE}/{key}"), backend: store.active().name(), generated };
    Ok(Reply::new(&report))
}

/// A random password of [`vnc::auth::PASSWORD_BYTES`] ASCII letters and digits (about 47.6
/// bits; VNC authentication's DES key holds no more than 8 bytes of 7 bits each).
fn generate_password() -> Result<String, VncError> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut out = String::new();
    while out.len() < vnc::auth::PASSWORD_BYTES {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| VncError::Usage(format!("no randomness: {e}")))?;
        // Bytes of 248 and above are dropped so that each of the 62 symbols is equally likely.
        let limit = 256 - 256 % ALPHABET.len();
        for b in bytes.iter().map(|b| usize::from(*b)).filter(|b| *b < limit) {
            if out.len() < vnc::auth::PASSWORD_BYTES {
                out.push(char::from(ALPHABET[b % ALPHABET.len()]));
            }
        }
    }
    Ok(out)
}
