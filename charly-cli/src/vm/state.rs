//! A VM's directory, `<data>/charly/vm/charly-<box>[-<instance>]/`, and the JSON files in it.
//!
//! | file | written by | what |
//! |---|---|---|
//! | `build.json` ([`Build`]) | `vm build` | the image it came from, the disk, kernel and initramfs |
//! | `disk.qcow2` or `disk.raw`, `vmlinuz`, `initrd.img` | `vm build` | the disk and the image's own kernel and initramfs |
//! | `known_hosts` | `vm build` | the guest's SSH host keys (made fresh in the disk), pinned for `vm ssh` |
//! | `vm.json` ([`Spec`]) | `vm create` | RAM, CPUs, ports, SSH port and key, backend, acceleration |
//! | `id_ed25519`, `id_ed25519.pub` | `vm create` | the VM's own key pair (`--ssh-key auto` or `generate`) |
//! | `run.json` ([`Run`]), `qemu.pid`, `qmp.sock`, `console.sock` | `vm start` | the running qemu; gone after `stop` |
//! | `console.log` | qemu | everything the serial console printed (`vm console` as a tool) |
//!
//! `vm destroy` removes what `create` and `start` wrote; `--disk` the whole directory. The
//! directory lives under charly's data directory (`$XDG_DATA_HOME/charly/vm`, else
//! `~/.local/share/charly/vm`), never relative to where a command runs (REFERENCE.md §18.11).

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::VmError;
use crate::hostfile;

/// What `vm build` recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    /// The box.
    pub r#box: String,
    /// The image it was built from.
    pub image: String,
    /// Its id (12 hex digits).
    pub image_id: String,
    /// The disk file name in the VM's directory (`disk.qcow2`, `disk.raw`).
    pub disk: String,
    /// `qcow2` or `raw`.
    pub format: String,
    /// The disk's size as the guest sees it, in bytes.
    pub size_bytes: u64,
    /// The kernel's version (`6.1.0-57-cloud-amd64`).
    pub kernel_version: String,
    /// The kernel command line (root device, console).
    pub cmdline: String,
    /// The image's init: `systemd` or the path `/sbin/init` leads to.
    pub init: String,
    /// Whether the image has an SSH server, whose host keys `known_hosts` pins.
    pub sshd: bool,
    /// The image's ports (its `ai.opencharly.port` label), forwarded by `vm create`.
    #[serde(default)]
    pub ports: Vec<u16>,
    /// Seconds since the epoch.
    pub built_at: u64,
}

/// An SSH key as `vm create` recorded it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SshKey {
    /// `auto`, `generate`, `path` or `none`.
    pub mode: String,
    /// The public key line injected for root (none with `none`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public: Option<String>,
    /// The private key `vm ssh` passes with `-i` (none: ssh's own keys and agent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub private: Option<PathBuf>,
}

/// A host port forwarded to a guest port (TCP, on 127.0.0.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Forward {
    /// The host port.
    pub host: u16,
    /// The guest port.
    pub guest: u16,
}

/// What `vm create` recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spec {
    /// The box.
    pub r#box: String,
    /// The instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// `qemu` or `libvirt`.
    pub backend: String,
    /// Memory in MiB.
    pub ram_mib: u64,
    /// Virtual CPUs.
    pub cpus: u32,
    /// The host port forwarded to the guest's port 22.
    pub ssh_port: u16,
    /// Other forwards (the box's `ai.opencharly.port` label, remapped by `--port`).
    pub ports: Vec<Forward>,
    /// The SSH key.
    pub ssh_key: SshKey,
    /// `auto`, `kvm` or `tcg`.
    pub accel: String,
    /// Seconds since the epoch.
    pub created_at: u64,
}

/// What `vm start` recorded about the qemu it started.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    /// qemu's pid (the qemu backend's; libvirt keeps its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// `kvm` or `tcg`.
    pub accel: String,
    /// Seconds since the epoch.
    pub started_at: u64,
}

/// One VM's directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dir(pub PathBuf);

impl Dir {
    /// A file in it.
    pub fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// `build.json`, when the disk was built.
    ///
    /// # Errors
    ///
    /// [`VmError::State`] for a file that cannot be read.
    pub fn build(&self) -> Result<Option<Build>, VmError> {
        read(&self.file("build.json"))
    }

    /// `vm.json`, when the VM was created.
    ///
    /// # Errors
    ///
    /// [`VmError::State`] for a file that cannot be read.
    pub fn spec(&self) -> Result<Option<Spec>, VmError> {
        read(&self.file("vm.json"))
    }

    /// `run.json`, when qemu was started and not stopped by charly since.
    ///
    /// # Errors
    ///
    /// [`VmError::State`] for a file that cannot be read.
    pub fn run(&self) -> Result<Option<Run>, VmError> {
        read(&self.file("run.json"))
    }

    /// Writes `name` (JSON, atomically, mode 0600).
    ///
    /// # Errors
    ///
    /// [`VmError::Io`].
    pub fn write<T: Serialize>(&self, name: &str, value: &T) -> Result<(), VmError> {
        let mut text = serde_json::to_vec_pretty(value).expect("state serialises");
        text.push(b'\n');
        Ok(hostfile::write_atomic(&self.file(name), &text, 0o600)?)
    }

    /// Removes the files of a running qemu (sockets, pid file, `run.json`); missing ones are fine.
    pub fn clear_run(&self) {
        for name in ["run.json", "qemu.pid", "qmp.sock", "console.sock"] {
            let _ = std::fs::remove_file(self.file(name));
        }
    }
}

fn read<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>, VmError> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| VmError::State { path: path.to_owned(), why: e.to_string() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(VmError::State { path: path.to_owned(), why: e.to_string() }),
    }
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// charly's VM directory: `$XDG_DATA_HOME/charly/vm` (an absolute XDG_DATA_HOME only, as the
/// XDG spec says), else `~/.local/share/charly/vm`.
pub fn root() -> PathBuf {
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| hostfile::home().join(".local/share"));
    data.join("charly/vm")
}
