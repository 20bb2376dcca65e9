//! `vm create`: records a VM of a built disk in `vm.json` ([`Spec`]); nothing starts.
//!
//! - RAM 128 MiB to the host's memory, CPUs 1 to the host's CPU count (defaults: the settings
//!   `vm.ram`, `vm.cpus`).
//! - Forwards on 127.0.0.1: the box's ports (its `ai.opencharly.port` label, recorded by `build`)
//!   to the same guest port, remapped or added with `--port HOST:GUEST`; the SSH port to 22.
//!   Every host port must be free now and not another VM's (the error names who holds it);
//!   `start` checks again.
//! - The SSH key for root (see `key`), passed at each boot as a systemd credential.
//!
//! A failed create leaves nothing: no `vm.json`, and no key pair it generated.

use std::path::{Path, PathBuf};

use super::state::{Forward, Spec, SshKey, now};
use super::{Vm, VmCreated, VmError, block, tool};
use crate::cli::{AccelArg, VmBackendArg};
use crate::context::Ctx;

/// The smallest VM memory `--ram` takes: 128 MiB.
pub const MIN_RAM_MIB: u64 = 128;

/// The SSH port a VM gets when none is given: the first free one from here.
pub const SSH_PORT: u16 = 2222;

/// The arguments of `vm create`.
#[derive(Clone, Debug)]
pub struct CreateRequest<'a> {
    /// The box.
    pub box_name: &'a str,
    /// The instance.
    pub instance: Option<&'a str>,
    /// `--ram` (default: the setting vm.ram).
    pub ram: Option<&'a str>,
    /// `--cpus` (default: the setting vm.cpus).
    pub cpus: Option<u32>,
    /// `--ssh-port`.
    pub ssh_port: Option<u16>,
    /// `--ssh-key`: `auto`, `generate`, `none` or a path (already resolved for the caller).
    pub ssh_key: &'a str,
    /// `--ssh-key` as a path resolved for the caller's scope (relative to the project on a
    /// terminal; inside it as a tool).
    pub ssh_key_path: Option<PathBuf>,
    /// `--port HOST:GUEST` values.
    pub ports: &'a [String],
    /// `--accel`.
    pub accel: AccelArg,
    /// `--backend`.
    pub backend: VmBackendArg,
}

/// `vm create`: see the module docs.
///
/// # Errors
///
/// A bad name, a VM that has no disk or exists already, RAM or CPUs out of range, a port taken
/// or another VM's, an SSH key path that is not a key, a key for a guest whose init is not
/// systemd, a backend that is not available.
pub fn create(ctx: &Ctx, root: &Path, r: &CreateRequest<'_>) -> Result<VmCreated, VmError> {
    let vm = Vm::new(root, r.box_name, r.instance)?;
    let _lock = super::lock(ctx, root, &vm)?;
    let build =
        vm.dir.build()?.ok_or_else(|| VmError::NotBuilt { name: vm.name().to_owned(), args: vm.args() })?;
    if let Some(spec) = vm.dir.spec()? {
        return Err(VmError::Exists {
            name: vm.name().to_owned(),
            ram_mib: spec.ram_mib,
            cpus: spec.cpus,
            ssh_port: spec.ssh_port,
            args: vm.args(),
        });
    }
    let settings = super::settings(ctx)?;
    let ram_text = r.ram.map_or_else(|| settings.value("vm.ram"), str::to_owned);
    let host_mib = host_memory_mib();
    let ram_mib = super::parse_size(&ram_text)
        .map(|b| b >> 20)
        .filter(|m| (MIN_RAM_MIB..=host_mib).contains(m))
        .ok_or_else(|| {
            VmError::Usage(format!(
                "{}: a VM's memory is {MIN_RAM_MIB}M to {host_mib}M (this host's memory), e.g. 2G or 512M",
                given(r.ram.is_some(), "--ram", "vm.ram", &format!("{ram_text:?}"))
            ))
        })?;
    let host_cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let cpus = match r.cpus {
        Some(n) => n,
        None => settings.value("vm.cpus").trim().parse().unwrap_or(0),
    };
    if !(1..=host_cpus).contains(&cpus) {
        return Err(VmError::Usage(format!(
            "{}: a VM has 1 to {host_cpus} CPU(s) (this host's count; more only runs slower)",
            given(r.cpus.is_some(), "--cpus", "vm.cpus", &cpus.to_string())
        )));
    }
    let backend = super::libvirt::choose(r.backend, &settings.value("vm.backend"))?;
    let taken = ports_of_other_vms(root, vm.name());
    let mut ports: Vec<Forward> = build.ports.iter().map(|&p| Forward { host: p, guest: p }).collect();
    for text in r.ports {
        let given = parse_forward(text)?;
        match ports.iter_mut().find(|f| f.guest == given.guest) {
            Some(f) => f.host = given.host,
            None => ports.push(given),
        }
    }
    let ssh_port = match r.ssh_port {
        Some(port) => port,
        None => (SSH_PORT..=u16::MAX)
            .find(|p| {
                !taken.iter().any(|(_, t)| t == p) && !ports.iter().any(|f| f.host == *p) && is_free(*p)
            })
            .unwrap_or(SSH_PORT),
    };
    let mut wanted = vec![(format!("--ssh-port {ssh_port}"), ssh_port)];
    for f in &ports {
        let source = if build.ports.contains(&f.guest)
            && !r.ports.iter().any(|p| parse_forward(p).is_ok_and(|g| g.guest == f.guest))
        {
            format!("port {} of box {}", f.guest, r.box_name)
        } else {
            format!("--port {}:{}", f.host, f.guest)
        };
        wanted.push((source, f.host));
    }
    for (i, (what, port)) in wanted.iter().enumerate() {
        if let Some((_, first)) = wanted[..i].iter().find(|(_, p)| p == port) {
            return Err(VmError::Usage(format!(
                "{what}: host port {port} is given twice (also by {first}); remap one"
            )));
        }
        if let Some((other, _)) = taken.iter().find(|(_, p)| p == port) {
            return Err(VmError::PortInUse {
                what: what.clone(),
                port: *port,
                owner: format!("VM {other}, which forwards it"),
                fix: format!("choose another port (e.g. {})", next_free(*port)),
            });
        }
        super::power::preflight(&vm, what, *port)?;
    }
    let (ssh_key, generated) = block(ctx, key(&vm, r))?;
    if ssh_key.public.is_some() && build.init != "systemd" {
        remove_generated(&vm, generated);
        return Err(VmError::Usage(format!(
            "--ssh-key {}: the key is passed at boot as a systemd credential, and this disk's init is {} (not \
             systemd); create the VM with --ssh-key none and put the key into the image",
            r.ssh_key, build.init
        )));
    }
    let spec = Spec {
        r#box: r.box_name.to_owned(),
        instance: vm.target.instance.clone(),
        backend: backend.to_owned(),
        ram_mib,
        cpus,
        ssh_port,
        ports,
        ssh_key,
        accel: match r.accel {
            AccelArg::Auto => "auto",
            AccelArg::Kvm => "kvm",
            AccelArg::Tcg => "tcg",
        }
        .to_owned(),
        created_at: now(),
    };
    let written = ctx
        .check_cancelled()
        .map_err(|_| VmError::Cancelled)
        .and_then(|()| super::libvirt::define(ctx, &vm, &build, &spec))
        .and_then(|()| vm.dir.write("vm.json", &spec));
    if let Err(e) = written {
        let _ = std::fs::remove_file(vm.dir.file("vm.json"));
        remove_generated(&vm, generated);
        return Err(e);
    }
    Ok(VmCreated {
        name: vm.name().to_owned(),
        backend: spec.backend,
        ram_mib,
        cpus,
        ssh_port,
        ports: spec.ports,
        ssh_key: spec.ssh_key,
        accel: spec.accel,
        dir: vm.dir.0.clone(),
        start: format!("charly vm start {}", vm.args()),
    })
}

/// `HOST:GUEST`, both ports 1 to 65535.
fn parse_forward(text: &str) -> Result<Forward, VmError> {
    let bad = || VmError::Usage(format!("--port {text:?}: give HOST:GUEST, two TCP ports (e.g. 8080:80)"));
    let (host, guest) = text.split_once(':').ok_or_else(bad)?;
    let port = |p: &str| p.trim().parse::<u16>().ok().filter(|p| *p > 0);
    Ok(Forward { host: port(host).ok_or_else(bad)?, guest: port(guest).ok_or_else(bad)? })
}

/// Whether `port` can be bound on 127.0.0.1 now.
pub fn is_free(port: u16) -> bool {
    std::net::TcpListener::bind(("127.0.0.1", port)).is_ok()
}

fn next_free(port: u16) -> u16 {
    (port.saturating_add(1)..=u16::MAX).find(|p| is_free(*p)).unwrap_or(port)
}

/// The host ports other VMs forward (their SSH port and forwards), with the VM's name.
fn ports_of_other_vms(root: &Path, name: &str) -> Vec<(String, u16)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let other = e.file_name().to_string_lossy().into_owned();
        if other == name || other.starts_with('.') {
            continue;
        }
        if let Ok(Some(spec)) = super::state::Dir(e.path()).spec() {
            out.push((other.clone(), spec.ssh_port));
            out.extend(spec.ports.iter().map(|f| (other.clone(), f.host)));
        }
    }
    out
}

fn host_memory_mib() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(1 << 20, |kib| kib >> 10)
}

/// The VM's key pair files.
fn pair(vm: &Vm) -> (PathBuf, PathBuf) {
    (vm.dir.file("id_ed25519"), vm.dir.file("id_ed25519.pub"))
}

fn remove_generated(vm: &Vm, generated: bool) {
    if generated {
        let (private, public) = pair(vm);
        let _ = std::fs::remove_file(private);
        let _ = std::fs::remove_file(public);
    }
}

/// The key of `--ssh-key`, and whether this call generated the VM's pair:
///
/// - `none`: no key; `vm ssh` uses ssh's own keys and agent.
/// - `auto`: the VM's own pair (`id_ed25519` in its directory) when it is there, else as `generate`.
/// - `generate`: a new ed25519 pair in the VM's directory (replacing one there).
/// - a path: a public key (`ssh-keygen -l` must read it), or a private key whose `.pub` is
///   beside it (or that `ssh-keygen -y` reads without a passphrase); a private key given is
///   what `vm ssh` passes with `-i`.
async fn key(vm: &Vm, r: &CreateRequest<'_>) -> Result<(SshKey, bool), VmError> {
    let (private, public) = pair(vm);
    let key = |mode: &str, public: String, private: Option<PathBuf>| SshKey {
        mode: mode.to_owned(),
        public: Some(public.trim().to_owned()),
        private,
    };
    match r.ssh_key {
        "none" => Ok((SshKey { mode: "none".into(), public: None, private: None }, false)),
        "auto" if private.is_file() && public.is_file() => {
            Ok((key("auto", std::fs::read_to_string(&public)?, Some(private)), false))
        }
        "auto" | "generate" => {
            let _ = std::fs::remove_file(&private);
            let _ = std::fs::remove_file(&public);
            let comment = format!("charly {}", vm.name());
            let args = [
                "-q".into(),
                "-t".into(),
                "ed25519".into(),
                "-N".into(),
                "".into(),
                "-C".into(),
                comment.into(),
                "-f".into(),
                private.clone().into_os_string(),
            ];
            let what = "ssh-keygen -t ed25519 (the VM's key pair)";
            let made = tool::checked(
                tool::command::<std::ffi::OsString>("ssh-keygen", &args),
                "ssh-keygen",
                tool::BASE_HINT,
                what,
            )
            .await;
            if let Err(e) = made {
                remove_generated(vm, true);
                return Err(e);
            }
            Ok((key(r.ssh_key, std::fs::read_to_string(&public)?, Some(private)), true))
        }
        given => {
            let path = r.ssh_key_path.clone().unwrap_or_else(|| PathBuf::from(given));
            let not_a_key = |why: String| {
                VmError::Usage(format!(
                    "--ssh-key {given}: {why}; give a public key file (id_ed25519.pub), a private key with its .pub \
                     beside it, or auto, generate or none"
                ))
            };
            let text = std::fs::read(&path)
                .map_err(|e| not_a_key(format!("cannot read {}: {e}", path.display())))?;
            let text = String::from_utf8_lossy(&text);
            if text.contains("PRIVATE KEY-----") {
                let mut pub_path = path.clone().into_os_string();
                pub_path.push(".pub");
                let pub_path = PathBuf::from(pub_path);
                let public = if pub_path.is_file() {
                    std::fs::read_to_string(&pub_path)?
                } else {
                    let args =
                        ["-y".into(), "-P".into(), "".into(), "-f".into(), path.clone().into_os_string()];
                    let out = tool::output(
                        tool::command::<std::ffi::OsString>("ssh-keygen", &args),
                        "ssh-keygen",
                        tool::BASE_HINT,
                    )
                    .await?;
                    if !out.status.success() {
                        return Err(not_a_key(format!(
                            "a private key without {} beside it, which ssh-keygen -y cannot read without a passphrase",
                            pub_path.display()
                        )));
                    }
                    String::from_utf8_lossy(&out.stdout).into_owned()
                };
                check_public(&public).map_err(not_a_key)?;
                return Ok((key("path", public, Some(path)), false));
            }
            check_public(&text).map_err(not_a_key)?;
            // ssh-keygen -l reads the file itself: a line that only looks like a key is refused.
            let args = ["-l".into(), "-f".into(), path.clone().into_os_string()];
            let out = tool::output(
                tool::command::<std::ffi::OsString>("ssh-keygen", &args),
                "ssh-keygen",
                tool::BASE_HINT,
            )
            .await?;
            if !out.status.success() {
                return Err(not_a_key(format!(
                    "ssh-keygen -l cannot read {} as a public key",
                    path.display()
                )));
            }
            let line = text.lines().find(|l| !l.trim().is_empty() && !l.starts_with('#')).unwrap_or_default();
            Ok((key("path", line.to_owned(), None), false))
        }
    }
}

/// A public key line: `<type> <base64> [comment]`, one key.
fn check_public(text: &str) -> Result<(), String> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).collect();
    let [line] = lines.as_slice() else {
        return Err(format!("the file holds {} lines, not one public key", lines.len()));
    };
    let mut fields = line.split_whitespace();
    let kind = fields.next().unwrap_or_default();
    let body = fields.next().unwrap_or_default();
    let known = kind.starts_with("ssh-") || kind.starts_with("ecdsa-") || kind.starts_with("sk-");
    if !known || body.len() < 16 {
        return Err("it is not an SSH public key (`ssh-ed25519 AAAA... comment`)".into());
    }
    Ok(())
}

/// Where a value came from, for an error: `--ram "abc"`, or `setting vm.ram "abc" (...)` when
/// the flag was left out and the setting (config.yml, `.env` or its variable) gave it.
pub(super) fn given(flag_given: bool, flag: &str, setting: &str, value: &str) -> String {
    if flag_given {
        format!("{flag} {value}")
    } else {
        format!(
            "setting {setting} {value} (`charly settings get {setting}` says where it is set; or give {flag})"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwards_and_public_keys_are_checked() {
        assert_eq!(parse_forward("8080:80").unwrap(), Forward { host: 8080, guest: 80 });
        for bad in ["8080", "0:80", "8080:x", "70000:80"] {
            assert!(parse_forward(bad).unwrap_err().to_string().contains("give HOST:GUEST"), "{bad}");
        }
        assert!(check_public("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIH2j test\n").is_ok());
        assert!(check_public("hello world\n").is_err());
        assert!(
            check_public("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIH2j a\nssh-rsa AAAAB3NzaC1yc2EAAAADAQAB b\n")
                .is_err()
        );
    }
}
