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
            interactive: true,
        });
    };
    // One argument after `--`: ssh hands it to the guest user's login shell as it is.
    args.extend(["--".into(), command.into()]);
    let limit = Duration::from_secs(r.timeout.max(1).into());
    let out = block(ctx, tool::output_within(tool::command(SSH, &args), SSH, tool::BASE_HINT, limit))?;
    let Some(out) = out else {
        return Err(VmError::Tool {
            what: format!("ssh {} `{command}`", vm.name()),
            why: format!("it did not finish within {} s (--timeout); ssh was stopped", r.timeout),
        });
    };
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out.status.code().unwrap_or(-1);
    if code == 255 && ssh_said(&stderr) {
        return Err(VmError::Tool {
            what: format!("ssh to VM {} on 127.0.0.1:{}", vm.name(), spec.ssh_port),
            why: format!(
                "{}; is its SSH server up yet (`charly vm console {}`)?",
                super::tail(&stderr, 3),
                vm.args()
            ),
        });
    }
    Ok(VmSsh {
        name: vm.name().to_owned(),
        command: command.to_owned(),
        exit_status: code,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
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
