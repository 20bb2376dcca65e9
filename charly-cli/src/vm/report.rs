//! The reports of the `vm.*` leaves.

use std::fmt;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

use super::state::{Forward, SshKey};
use crate::project::VmHost;
use crate::report::Report;

/// `vm build`: a VM's disk.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct VmBuilt {
    /// The VM, `charly-<box>[-<instance>]`.
    pub name: String,
    /// The box.
    pub r#box: String,
    /// The instance, when the VM is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// The image it was made from.
    pub image: String,
    /// The image's id (12 hex digits).
    pub image_id: String,
    /// The disk file.
    pub disk: PathBuf,
    /// `qcow2` or `raw`.
    pub format: String,
    /// The disk's size as the guest sees it, in bytes.
    pub size_bytes: u64,
    /// What the disk file takes on the host, in bytes (allocated blocks).
    pub disk_bytes: u64,
    /// What the image's files take, in bytes.
    pub files_bytes: u64,
    /// The kernel's version (the image's own, booted directly).
    pub kernel_version: String,
    /// The image's init (`systemd`, or the path `/sbin/init` leads to).
    pub init: String,
    /// Whether the image has an SSH server (its fresh host keys are pinned for `vm ssh`).
    pub sshd: bool,
    /// The image's ports, which `vm create` forwards.
    pub ports: Vec<u16>,
    /// How long the build took, in seconds.
    pub secs: f64,
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

impl fmt::Display for VmBuilt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "built {} from {} ({}) in {:.1} s", self.name, self.image, self.image_id, self.secs)?;
        writeln!(
            f,
            "  disk   {} ({}, {} as the guest sees it, {} on the host)",
            self.disk.display(),
            self.format,
            mib(self.size_bytes),
            mib(self.disk_bytes)
        )?;
        writeln!(f, "  kernel {} (direct boot), init {}", self.kernel_version, self.init)?;
        if !self.sshd {
            writeln!(f, "  no SSH server in the image: vm ssh will not reach it")?;
        }
        let instance = self.instance.as_ref().map(|i| format!(" -i {i}")).unwrap_or_default();
        writeln!(f, "next: charly vm create {}{instance}", self.r#box)
    }
}

impl Report for VmBuilt {}

/// `vm create`: a VM recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct VmCreated {
    /// The VM.
    pub name: String,
    /// `qemu` or `libvirt`.
    pub backend: String,
    /// Memory in MiB.
    pub ram_mib: u64,
    /// Virtual CPUs.
    pub cpus: u32,
    /// The host port on 127.0.0.1 forwarded to the guest's SSH port.
    pub ssh_port: u16,
    /// The other forwards on 127.0.0.1.
    pub ports: Vec<Forward>,
    /// The SSH key injected for root at boot.
    pub ssh_key: SshKey,
    /// `auto`, `kvm` or `tcg`.
    pub accel: String,
    /// The VM's directory.
    pub dir: PathBuf,
    /// The command that starts it.
    pub start: String,
}

impl fmt::Display for VmCreated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "created {} ({}): {} MiB, {} CPU(s), accel {}",
            self.name, self.backend, self.ram_mib, self.cpus, self.accel
        )?;
        writeln!(f, "  ssh    127.0.0.1:{} -> 22 (key: {})", self.ssh_port, self.ssh_key.mode)?;
        for p in &self.ports {
            writeln!(f, "  port   127.0.0.1:{} -> {}", p.host, p.guest)?;
        }
        writeln!(f, "next: {}", self.start)
    }
}

impl Report for VmCreated {}

/// `vm start`: a VM runs.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct VmStarted {
    /// The VM.
    pub name: String,
    /// `qemu` or `libvirt`.
    pub backend: String,
    /// qemu's pid (qemu backend).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// `kvm` or `tcg`.
    pub accel: String,
    /// Why that acceleration.
    pub accel_why: String,
    /// The SSH port on 127.0.0.1.
    pub ssh_port: u16,
    /// The other forwards.
    pub ports: Vec<Forward>,
    /// The serial console's log.
    pub console_log: PathBuf,
    /// Seconds from start until the guest's SSH server answered (with `--wait`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ssh_ready_secs: Option<f64>,
}

impl fmt::Display for VmStarted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pid = self.pid.map(|p| format!(", pid {p}")).unwrap_or_default();
        writeln!(
            f,
            "started {} ({}{pid}) under {}: {}",
            self.name,
            self.backend,
            self.accel.to_uppercase(),
            self.accel_why
        )?;
        match self.ssh_ready_secs {
            Some(secs) => writeln!(f, "  ssh    127.0.0.1:{} answered after {secs:.1} s", self.ssh_port)?,
            None => writeln!(f, "  ssh    127.0.0.1:{} (the guest is booting)", self.ssh_port)?,
        }
        for p in &self.ports {
            writeln!(f, "  port   127.0.0.1:{} -> {}", p.host, p.guest)?;
        }
        writeln!(f, "  console log {}", self.console_log.display())
    }
}

impl Report for VmStarted {}

/// `vm stop`: a VM stopped.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct VmStopped {
    /// The VM.
    pub name: String,
    /// How: `acpi` (the guest powered off), `sigterm` (QMP did not answer), `quit` or `sigkill`
    /// (`--force`), `destroy` (libvirt `--force`).
    pub how: String,
    /// How long it took, in seconds.
    pub secs: f64,
}

impl fmt::Display for VmStopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "stopped {} ({}) in {:.1} s", self.name, self.how, self.secs)
    }
}

impl Report for VmStopped {}

/// `vm destroy`: a VM removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct VmDestroyed {
    /// The VM.
    pub name: String,
    /// Whether it was running (and was stopped at once).
    pub stopped: bool,
    /// Whether it had been created (a built-only VM has nothing but its disk).
    pub created: bool,
    /// Whether its disk (its whole directory) was removed.
    pub disk_removed: bool,
    /// What was removed.
    pub removed: Vec<PathBuf>,
}

impl fmt::Display for VmDestroyed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stopped = if self.stopped { " (stopped first)" } else { "" };
        writeln!(f, "destroyed {}{stopped}", self.name)?;
        let staging = |p: &&PathBuf| p.file_name().is_some_and(|n| n.to_string_lossy().contains(".build-"));
        let left: Vec<&PathBuf> = self.removed.iter().filter(staging).collect();
        for path in &left {
            writeln!(f, "  removed what an interrupted vm build left: {}", path.display())?;
        }
        if !left.is_empty() && left.len() == self.removed.len() && !self.created && !self.disk_removed {
            Ok(())
        } else if self.disk_removed {
            writeln!(f, "  removed its directory, disk included")
        } else {
            writeln!(f, "  kept its disk (`charly vm destroy --disk` removes it)")
        }
    }
}

impl Report for VmDestroyed {}

/// One VM of `vm list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct VmRow {
    /// The VM.
    pub name: String,
    /// Its box.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r#box: Option<String>,
    /// `running`, `stopped`, `built` (a disk, not created), `incomplete`, or libvirt's state.
    pub state: String,
    /// `qemu` or `libvirt` (when created).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// `kvm` or `tcg` (while it runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accel: Option<String>,
    /// qemu's pid (while it runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The SSH port on 127.0.0.1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ssh_port: Option<u16>,
    /// Memory in MiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ram_mib: Option<u64>,
    /// Virtual CPUs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u32>,
    /// The disk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk: Option<PathBuf>,
    /// A remark (`its qemu (pid 12) ended without vm stop`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `vm list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct VmList {
    /// Whether every VM was asked for (`--all`), or running ones only.
    pub all: bool,
    /// What runs VMs here.
    pub host: VmHost,
    /// The VMs.
    pub vms: Vec<VmRow>,
}

impl fmt::Display for VmList {
    /// `NAME<TAB>STATE<TAB>ACCEL<TAB>SSH<TAB>RAM<TAB>CPUS` per VM, then the host line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dash = || "-".to_owned();
        for v in &self.vms {
            writeln!(
                f,
                "{}\t{}\t{}\t{}\t{}\t{}{}",
                v.name,
                v.state,
                v.accel.clone().unwrap_or_else(dash),
                v.ssh_port.map(|p| format!("127.0.0.1:{p}")).unwrap_or_else(dash),
                v.ram_mib.map(|m| format!("{m}M")).unwrap_or_else(dash),
                v.cpus.map(|c| c.to_string()).unwrap_or_else(dash),
                v.note.as_ref().map(|n| format!("\t({n})")).unwrap_or_default()
            )?;
        }
        if self.vms.is_empty() {
            let which = if self.all { "no VMs" } else { "no running VMs (--all lists every one)" };
            writeln!(f, "{which}")?;
        }
        writeln!(f, "# {}", self.host)
    }
}

impl Report for VmList {}

/// `vm console`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct VmConsole {
    /// The VM.
    pub name: String,
    /// Whether it runs.
    pub running: bool,
    /// Whether the terminal was attached (else `lines` holds the log's tail).
    pub attached: bool,
    /// The console log's last lines.
    pub lines: Vec<String>,
    /// The console log.
    pub log: PathBuf,
}

impl fmt::Display for VmConsole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.attached {
            return writeln!(f, "detached from {}'s console", self.name);
        }
        for line in &self.lines {
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}

impl Report for VmConsole {}

/// `vm ssh`: a command's output and exit status (or an interactive session's status).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct VmSsh {
    /// The VM.
    pub name: String,
    /// The command (empty for an interactive session).
    pub command: String,
    /// Its exit status.
    pub exit_status: i32,
    /// Its stdout (as a tool, at most its first [`crate::report::TOOL_OUTPUT_CAP`] bytes).
    pub stdout: String,
    /// Its stderr (as a tool, at most its first [`crate::report::TOOL_OUTPUT_CAP`] bytes).
    pub stderr: String,
    /// As a tool: how many bytes of stdout were left out after the cap (absent: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout_cut: Option<usize>,
    /// As a tool: how many bytes of stderr were left out after the cap (absent: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr_cut: Option<usize>,
    /// Whether the terminal was handed to ssh.
    pub interactive: bool,
}

impl fmt::Display for VmSsh {
    /// Stdout, then stderr, each followed by a note when it was cut.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (stream, text, cut) in
            [("stdout", &self.stdout, self.stdout_cut), ("stderr", &self.stderr, self.stderr_cut)]
        {
            f.write_str(text)?;
            if let Some(left_out) = cut {
                if !text.is_empty() && !text.ends_with('\n') {
                    f.write_str("\n")?;
                }
                f.write_str(&crate::report::cut_note(stream, left_out))?;
            }
        }
        Ok(())
    }
}

impl Report for VmSsh {
    fn failure(&self) -> Option<String> {
        (self.exit_status != 0 && !self.interactive)
            .then(|| format!("the command exited with status {}", self.exit_status))
    }
}
