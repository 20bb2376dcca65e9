//! `vm ssh`: the real `ssh` to `127.0.0.1:<ssh port>`, the VM's forward to the guest's port 22.
//!
//! Host keys: `vm build` wrote the guest's fresh host keys to the VM's `known_hosts`, so ssh
//! runs with `StrictHostKeyChecking=yes`, `UserKnownHostsFile=<that file>` and
//! `HostKeyAlias=<vm>`: a key that is not the one built into the disk is refused by ssh itself
//! (nothing is trusted on first use, nothing is ignored, and the user's own known_hosts is
//! neither read nor written). `-F none`: the user's ssh config (a `Host *` ProxyCommand, say)
//! does not apply to a forward on loopback. The key: the VM's recorded private key with
//! `IdentitiesOnly=yes`; with `--ssh-key none` or a public key only, ssh's own keys and agent.
//!
//! As a tool (and with `--command`), `BatchMode=yes`: ssh never prompts, and the command's
//! output and exit status are returned; ssh's own failure (exit status 255 with a message of
//! its own) is an error naming the VM and the port.

use std::ffi::OsString;
use std::io::IsTerminal as _;
use std::path::Path;
use std::time::Duration;

use super::{Vm, VmError, VmSsh, block, qemu, tool};
use crate::context::{Ctx, Scope};

/// The ssh program.
pub const SSH: &str = "ssh";

/// The request of `vm ssh`.
#[derive(Clone, Copy, Debug)]
pub struct SshRequest<'a> {
    /// The box.
    pub box_name: &'a str,
    /// The instance.
    pub instance: Option<&'a str>,
    /// `--command`.
    pub command: Option<&'a str>,
    /// `--user`.
    pub user: &'a str,
    /// `--timeout` in seconds.
    pub timeout: u32,
}

/// `vm ssh`: see the module docs.
///
/// # Errors
///
/// No `command` as a tool (or without a terminal), a VM not created or not running, an image
/// without an SSH server, ssh failing to connect, the timeout.
pub fn ssh(ctx: &Ctx, root: &Path, r: &SshRequest<'_>) -> Result<VmSsh, VmError> {
    let vm = Vm::new(root, r.box_name, r.instance)?;
    if r.command.is_none() && (ctx.scope() == Scope::Served || !std::io::stdin().is_terminal()) {
        return Err(VmError::Usage(format!(
            "vm ssh: give `command` (`--command 'uname -a'`): {}",
            if ctx.scope() == Scope::Served {
                "as a tool, vm ssh runs one command and returns its output; it never waits on a terminal"
            } else {
                "stdin is not a terminal, so there is nothing to attach an interactive shell to"
            }
        )));
    }
    if r.user.is_empty() || r.user.starts_with('-') || r.user.contains(['@', ' ']) {
        return Err(VmError::Usage(format!(
            "--user {:?}: a user name (no `@`, spaces or leading `-`)",
            r.user
        )));
    }
    let build =
        vm.dir.build()?.ok_or_else(|| VmError::NotBuilt { name: vm.name().to_owned(), args: vm.args() })?;
    let spec =
        vm.dir.spec()?.ok_or_else(|| VmError::NotCreated { name: vm.name().to_owned(), args: vm.args() })?;
    if !build.sshd {
        return Err(VmError::Usage(format!(
            "VM {}: its image ({}) had no SSH server when the disk was built; add openssh-server to the box, then \
             `charly box build {}` and `charly vm build {}`",
            vm.name(),
            build.image,
            build.r#box,
            vm.args()
        )));
    }
    let running = if spec.backend == "libvirt" {
        super::libvirt::states(ctx).get(vm.name()).is_some_and(|s| s == "running")
    } else {
        qemu::running(&vm.dir)?.is_some()
    };
    if !running {
        return Err(VmError::NotRunning { name: vm.name().to_owned(), why: String::new(), args: vm.args() });
    }
    let mut args: Vec<OsString> = vec!["-F".into(), "none".into()];
    let mut option = |o: String| args.extend(["-o".into(), o.into()]);
    option("StrictHostKeyChecking=yes".into());
    // Quoted (a path may hold spaces, which would separate files), `%` doubled (ssh expands %-tokens).
    let known = vm.dir.file("known_hosts").display().to_string().replace('%', "%%");
    option(format!("UserKnownHostsFile=\"{known}\""));
    option(format!("HostKeyAlias={}", vm.name()));
    option("ConnectTimeout=10".into());
    option("LogLevel=ERROR".into());
    if r.command.is_some() {
        option("BatchMode=yes".into());
    }
    if let Some(private) = &spec.ssh_key.private {
        option("IdentitiesOnly=yes".into());
        args.extend(["-i".into(), private.clone().into_os_string()]);
    }
    args.extend([
        "-p".into(),
        spec.ssh_port.to_string().into(),
        "-l".into(),
        r.user.into(),
        "127.0.0.1".into(),
    ]);
    let Some(command) = r.command else {
        args.push("-t".into());
        let status = std::process::Command::new(SSH).args(&args).status().map_err(|e| VmError::Missing {
            program: SSH.into(),
            why: e.to_string(),
            hint: tool::BASE_HINT,
        })?;
        return Ok(VmSsh {
            name: vm.name().to_owned(),
            command: String::new(),
            exit_status: status.code().unwrap_or(-1),
            stdout: String::new(),
            stderr: String::new(),
            stdout_cut: None,
            stderr_cut: None,
            interactive: true,
        });
    };
    // One argument after `--`, which the guest user's login shell reads: the watch wrapper
    // ([`WATCH`]) with the command as its `$1`, single-quoted (a word, never more syntax).
    args.extend(["--".into(), format!("sh -c '{WATCH}' charly-vm-ssh {}", quote(command)).into()]);
    let limit = Duration::from_secs(r.timeout.max(1).into());
    let out = block(ctx, watched(&args, limit))?;
    let Some(out) = out else {
        return Err(VmError::Tool {
            what: format!("ssh {} `{command}`", vm.name()),
            why: format!(
                "it did not finish within {} s (--timeout); ssh was stopped, and with it the command in the guest",
                r.timeout
            ),
        });
    };
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out.status.code().unwrap_or(-1);
    if code == 255 && ssh_said(&stderr) {
        let hint = if stderr.contains("Permission denied") {
            block(ctx, auth_hint(&vm, &spec.ssh_key, r.user))?
        } else if stderr.contains("Host key verification failed") {
            format!(
                "the guest's host key is not the one `charly vm build` made for its disk (pinned in {}); rebuild                  it with `charly vm build {}`",
                vm.dir.file("known_hosts").display(),
                vm.args()
            )
        } else {
            format!("is its SSH server up yet (`charly vm console {}`)?", vm.args())
        };
        return Err(VmError::Tool {
            what: format!("ssh to VM {} on 127.0.0.1:{}", vm.name(), spec.ssh_port),
            why: format!("{}; {hint}", super::tail(&stderr, 3)),
        });
    }
    // As a tool the streams are capped (a reply carries each twice); on a terminal never.
    let stream = |bytes: &[u8]| match ctx.scope() {
        Scope::Served => crate::report::capped_output(bytes),
        Scope::Terminal => (String::from_utf8_lossy(bytes).into_owned(), 0),
    };
    let ((stdout, stdout_cut), (stderr, stderr_cut)) = (stream(&out.stdout), stream(&out.stderr));
    Ok(VmSsh {
        name: vm.name().to_owned(),
        command: command.to_owned(),
        exit_status: code,
        stdout,
        stderr,
        stdout_cut: (stdout_cut > 0).then_some(stdout_cut),
        stderr_cut: (stderr_cut > 0).then_some(stderr_cut),
        interactive: false,
    })
}

/// Whether ssh itself failed (its own words), not the remote command exiting 255.
fn ssh_said(stderr: &str) -> bool {
    [
        "ssh:",
        "Host key verification failed",
        "Permission denied",
        "kex_exchange_identification",
        "Connection closed by",
    ]
    .iter()
    .any(|s| stderr.contains(s))
}

/// The guest side of `vm ssh --command`, run by `sh -c` with the command as `$1`: the command
/// runs under the user's login shell in its own session (`setsid`, so its process group is its
/// pid) with stdin from /dev/null, while a watcher reads the SSH channel's stdin, which charly
/// holds open and never writes. When charly's ssh ends before the command (`--timeout`, a
/// cancelled tool call, Ctrl-C), sshd closes the channel, the watcher sees end of file and
/// ends the command's whole process group (SIGTERM, SIGKILL 2 s later). The channel is fd 3
/// (a background job's stdin is /dev/null in a shell without job control). Chosen over `ssh -tt`,
/// whose pty would also end it (SIGHUP) but merges stderr into stdout and rewrites newlines;
/// over `timeout` in the guest, which covers the time limit but not a cancellation. It needs
/// `setsid` (util-linux, in every systemd guest) and a POSIX `sh`.
const WATCH: &str = "exec 3<&0 0</dev/null; setsid \"${SHELL:-/bin/sh}\" -c \"$1\" 3<&- & p=$!; \
    (cat <&3 >/dev/null 2>&1; kill -TERM -$p; sleep 2; kill -KILL -$p) >/dev/null 2>&1 & w=$!; exec 3<&-; \
    wait $p; s=$?; kill $w 2>/dev/null; exit $s";

/// `text` as one single-quoted word of a POSIX shell (`'` written `'\''`).
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Runs ssh with `args` for at most `limit` with its stdin a pipe held open (the guest's
/// watcher, [`WATCH`], ends the command when it closes); `None` when it did not end in time
/// (ssh is killed, and so the guest's command).
async fn watched(args: &[OsString], limit: Duration) -> Result<Option<std::process::Output>, VmError> {
    let mut command = tool::command(SSH, args);
    command.stdin(std::process::Stdio::piped());
    let mut child = command.spawn().map_err(|e| VmError::Missing {
        program: SSH.into(),
        why: e.to_string(),
        hint: tool::BASE_HINT,
    })?;
    let stdin = child.stdin.take();
    let out = tokio::time::timeout(limit, child.wait_with_output()).await;
    drop(stdin);
    match out {
        Ok(out) => Ok(Some(out?)),
        Err(_) => Ok(None),
    }
}

/// Why the guest refused to log in (ssh's "Permission denied"), and what to do: a VM created
/// with `--ssh-key none`, a user other than root (the key is root's), a private key that needs
/// a passphrase (never asked with `--command`), or the key the VM has.
async fn auth_hint(vm: &Vm, key: &super::state::SshKey, user: &str) -> Result<String, VmError> {
    let args = vm.args();
    if key.mode == "none" {
        return Ok(format!(
            "the SSH server answered and refused: VM {} was created with --ssh-key none, so no key was given to it \
             and ssh tried your own keys and agent; `charly vm destroy {args}` and `charly vm create {args}` with \
             --ssh-key auto (or a key of yours)",
            vm.name()
        ));
    }
    if user != "root" {
        return Ok(format!(
            "the SSH server answered and refused: the VM's key is given to root only (`--user root`, the default); \
             user {user} needs a key of its own in the guest"
        ));
    }
    if let Some(private) = &key.private
        && needs_passphrase(private).await
    {
        return Ok(format!(
            "the SSH server answered and refused: the private key {} needs a passphrase, which vm ssh --command (and a \
             tool call) never asks for; load it into an agent (`ssh-add {}`), or run `charly vm ssh {args}` on a \
             terminal, where ssh asks",
            private.display(),
            private.display()
        ));
    }
    Ok(format!(
        "the SSH server answered and refused the VM's key ({}); was the key changed after the guest last booted? \
         `charly vm stop {args}` and `charly vm start {args}` give it the recorded key again",
        key.private.as_ref().map_or_else(|| "ssh's own keys".to_owned(), |p| p.display().to_string())
    ))
}

/// Whether the private key at `path` is encrypted: `ssh-keygen -y` cannot read it with an
/// empty passphrase (and never prompts: `-P ''`).
pub(super) async fn needs_passphrase(path: &Path) -> bool {
    let args = [OsString::from("-y"), "-P".into(), "".into(), "-f".into(), path.as_os_str().to_owned()];
    match tool::output(tool::command("ssh-keygen", &args), "ssh-keygen", tool::BASE_HINT).await {
        Ok(out) => !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("passphrase"),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_one_single_quoted_word() {
        assert_eq!(quote("echo 'a b'; exit 3"), r"'echo '\''a b'\''; exit 3'");
        // The channel held open, as charly holds ssh's stdin: closed, it would end the command.
        let mut child = std::process::Command::new("sh")
            .args(["-c", &format!("sh -c '{WATCH}' x {}", quote("echo \"$#\" 'it''s'; exit 3"))])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let channel = child.stdin.take();
        let out = child.wait_with_output().unwrap();
        drop(channel);
        assert_eq!((String::from_utf8_lossy(&out.stdout).trim(), out.status.code()), ("0 its", Some(3)));
    }

    #[test]
    fn the_command_ends_when_its_channel_closes() {
        // As in the guest once charly's ssh is gone: sshd closes the channel's stdin.
        let marker = format!("sleep 37.{}", std::process::id());
        let mut child = std::process::Command::new("sh")
            .args(["-c", &format!("sh -c '{WATCH}' x {}", quote(&format!("{marker}; echo never")))])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let running = || {
            std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
                std::fs::read(e.path().join("cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c) == format!("sleep\0{}\0", &marker[6..]))
            })
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !running() {
            assert!(std::time::Instant::now() < deadline, "the command did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        drop(child.stdin.take());
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while child.try_wait().unwrap().is_none() || running() {
            assert!(std::time::Instant::now() < deadline, "the command outlived its channel");
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        assert!(!String::from_utf8_lossy(&out.stdout).contains("never"));
    }

    #[test]
    fn an_encrypted_key_is_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        for (name, pass, encrypted) in [("plain", "", false), ("locked", "pw", true)] {
            let key = dir.path().join(name);
            let made = std::process::Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", pass, "-f"])
                .arg(&key)
                .status()
                .unwrap();
            assert!(made.success());
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            assert_eq!(runtime.block_on(needs_passphrase(&key)), encrypted, "{name}");
        }
    }
}
