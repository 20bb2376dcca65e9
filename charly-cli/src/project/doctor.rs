//! `doctor`: what the host has — podman, git, a project — and their versions.

use std::ffi::OsStr;
use std::fmt;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

use super::error::Result;
use super::model::{PROJECT_FILE, Project};
use super::tools;

/// What [`doctor`] found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DoctorReport {
    /// charly's own version.
    pub charly: String,
    /// `podman --version`, when podman runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub podman: Option<String>,
    /// `git --version`, when git runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git: Option<String>,
    /// The project root, when `project` names a directory with a charly.yml.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<PathBuf>,
    /// The project's problems, as `box.validate` reports them (empty without a project).
    pub problems: usize,
    /// What runs VMs here (`vm.*`): qemu, KVM or TCG and why, libvirt.
    // Filled in by the `doctor` leaf: the VM family sits above the project module.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vm: Option<VmHost>,
}

/// Reports the versions of charly, podman and git, and whether `project` is a valid project.
pub fn doctor(project: Option<&Project>) -> Result<DoctorReport> {
    let found = project.filter(|p| p.root().join(PROJECT_FILE).is_file());
    let problems = match found {
        Some(p) => p.validate()?.problems.len(),
        None => 0,
    };
    Ok(DoctorReport {
        charly: env!("CARGO_PKG_VERSION").to_owned(),
        podman: tools::version(OsStr::new("podman")),
        git: tools::version(OsStr::new("git")),
        project: found.map(|p| p.root().to_owned()),
        problems,
        vm: None,
    })
}

impl fmt::Display for DoctorReport {
    /// One line per tool (`podman  podman version 4.3.1`, or `missing (needed by ...)`), then
    /// the project and its problem count.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let missing = |what: &str| format!("missing ({what})");
        writeln!(f, "charly  {}", self.charly)?;
        writeln!(f, "podman  {}", self.podman.clone().unwrap_or_else(|| missing("needed by box build")))?;
        writeln!(
            f,
            "git     {}",
            self.git.clone().unwrap_or_else(|| missing("needed by box fetch/refresh"))
        )?;
        if let Some(vm) = &self.vm {
            writeln!(f, "vm      {vm}")?;
        }
        match &self.project {
            Some(root) => {
                writeln!(f, "project {}", root.display())?;
                writeln!(f, "        {} problem(s) (see `charly box validate`)", self.problems)
            }
            None => writeln!(f, "project none (no charly.yml; `charly box new project` makes one)"),
        }
    }
}

impl crate::report::Report for DoctorReport {}

/// What runs VMs on this host (`vm list`, `doctor`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct VmHost {
    /// `qemu-system-x86_64 --version`'s first line, when qemu runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qemu: Option<String>,
    /// What `--accel auto` uses: `kvm` or `tcg` (none without qemu).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accel: Option<String>,
    /// Why (the KVM probe's finding), or why there is none.
    pub why: String,
    /// Whether libvirt's session daemon answers (`--backend auto` then uses it).
    pub libvirt: bool,
}

impl fmt::Display for VmHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.qemu, &self.accel) {
            (Some(qemu), Some(accel)) => {
                write!(f, "{qemu}; VMs run under {}: {}", accel.to_uppercase(), self.why)?
            }
            _ => write!(f, "no qemu: {}", self.why)?,
        }
        if self.libvirt {
            write!(f, "; libvirt session daemon answers")?;
        }
        Ok(())
    }
}
