//! `charly vm ...`: boxes as virtual machines ([`crate::vm`]), REFERENCE.md §11 in charly's
//! names, with the quirks of §18.11 fixed.

use charly::McpTool;
use clap::{Args, Subcommand, ValueEnum};

use crate::vm::{VmBuilt, VmConsole, VmCreated, VmDestroyed, VmList, VmSsh, VmStarted, VmStopped};

/// A box and an instance: the VM `charly-<box>[-<instance>]`.
#[derive(Args, McpTool, Debug, Clone)]
pub struct VmTarget {
    /// Box name
    pub r#box: String,
    /// Instance name: the VM is charly-<box>-<instance> (default: charly-<box>)
    #[arg(short, long)]
    pub instance: Option<String>,
}

/// The disk image format `vm build` writes.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiskFormat {
    /// qcow2 (qemu-img convert of the raw file system): compact, what both backends use
    Qcow2,
    /// The raw ext4 file system, sparse
    Raw,
}

/// Which hypervisor runs a VM.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmBackendArg {
    /// The setting vm.backend (auto: libvirt when its session daemon's socket is there, else qemu)
    Auto,
    /// qemu-system-x86_64 driven over QMP
    Qemu,
    /// libvirt's session daemon (qemu:///session) through virsh
    Libvirt,
}

/// How the CPU is virtualised.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccelArg {
    /// KVM when a probe guest runs under it, else TCG (checked at each start, cached per boot)
    Auto,
    /// KVM; an error when it does not work here
    Kvm,
    /// TCG: qemu's emulator, slower, works everywhere
    Tcg,
}

/// `charly vm ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum VmCmd {
    /// Make a VM's bootable disk from its box's built image: the image's file system as ext4
    /// (mkfs.ext4 -d, no loop device), its own kernel and initramfs kept beside the disk for
    /// direct kernel boot, fresh SSH host keys pinned for vm ssh
    #[mcp_tool(output = VmBuilt, destructive = "writes a VM disk, replacing an earlier one")]
    Build {
        /// The box and instance.
        #[command(flatten)]
        target: VmTarget,
        /// Disk size, e.g. 10G, 2048M (default: the setting vm.disk_size)
        #[arg(long)]
        size: Option<String>,
        /// Disk image format
        #[arg(long, value_enum, default_value = "qcow2")]
        format: DiskFormat,
    },
    /// Record a VM of a built disk: RAM, CPUs, the box's ports forwarded on 127.0.0.1, an SSH
    /// port and key (nothing starts)
    #[mcp_tool(output = VmCreated, destructive = "records a VM and may generate an SSH key")]
    Create {
        /// The box and instance.
        #[command(flatten)]
        target: VmTarget,
        /// Memory, e.g. 2G, 512M: 128M to the host's memory (default: the setting vm.ram)
        #[arg(long)]
        ram: Option<String>,
        /// Virtual CPUs: 1 to the host's CPU count (default: the setting vm.cpus)
        #[arg(long)]
        cpus: Option<u32>,
        /// Host port on 127.0.0.1 forwarded to the guest's SSH port 22 (default: the first
        /// free port from 2222 that no other VM uses; 1 to 65535)
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
        ssh_port: Option<u16>,
        /// SSH key for root: auto (the VM's own key pair, made when missing), generate (a new
        /// pair), none, or the path of a public key (or of a private key with its .pub beside it)
        #[arg(long, default_value = "auto")]
        ssh_key: String,
        /// Forward a port: HOST:GUEST, remapping the box's own port GUEST or adding one (repeatable)
        #[arg(short, long = "port", value_name = "HOST:GUEST")]
        port: Vec<String>,
        /// CPU virtualisation
        #[arg(long, value_enum, default_value = "auto")]
        accel: AccelArg,
        /// Hypervisor
        #[arg(long, value_enum, default_value = "auto")]
        backend: VmBackendArg,
    },
    /// Start a created VM (its ports checked free first); --wait waits until its SSH server answers
    #[mcp_tool(output = VmStarted, destructive = "starts a virtual machine")]
    Start {
        /// The box and instance.
        #[command(flatten)]
        target: VmTarget,
        /// Wait up to this many seconds for the guest's SSH server (0: return once qemu runs)
        #[arg(long, default_value_t = 0)]
        wait: u32,
    },
    /// Stop a running VM: ACPI power button (the guest shuts down), or --force (qemu quits at once)
    #[mcp_tool(output = VmStopped, destructive = "stops a virtual machine")]
    Stop {
        /// The box and instance.
        #[command(flatten)]
        target: VmTarget,
        /// Quit qemu at once (the guest gets no shutdown; like pulling the plug)
        #[arg(long)]
        force: bool,
        /// Seconds to wait for the guest to power off
        #[arg(short, long, default_value_t = 120)]
        timeout: u32,
    },
    /// Remove a VM (stopping it at once when it runs): its settings, its own SSH key pair and its
    /// console log; --disk also removes its disk, kernel and pinned host keys
    #[mcp_tool(output = VmDestroyed, destructive = "removes a virtual machine and, with disk, its disk")]
    Destroy {
        /// The box and instance.
        #[command(flatten)]
        target: VmTarget,
        /// Also remove the disk (and everything else in the VM's directory)
        #[arg(long)]
        disk: bool,
    },
    /// List running VMs (--all: every VM, also stopped and built-only), with the
    /// acceleration (KVM or TCG) and why
    #[mcp_tool(output = VmList)]
    List {
        /// Every VM, not only running ones
        #[arg(short, long)]
        all: bool,
    },
    /// The VM's serial console: attached on a terminal (Ctrl-] detaches); as a tool, or with
    /// --lines, its last lines
    #[mcp_tool(output = VmConsole)]
    Console {
        /// The box and instance.
        #[command(flatten)]
        target: VmTarget,
        /// Print the console log's last lines instead of attaching
        #[arg(short = 'n', long)]
        lines: Option<u32>,
    },
    /// SSH into a running VM as root through its forwarded port on 127.0.0.1: a shell on a
    /// terminal; with --command (required as a tool) runs it and returns its output and status
    #[mcp_tool(output = VmSsh, destructive = "runs a command in a virtual machine")]
    Ssh {
        /// The box and instance.
        #[command(flatten)]
        target: VmTarget,
        /// Run this (the guest's login shell reads it) and return its output and exit status
        #[arg(short, long)]
        command: Option<String>,
        /// The user
        #[arg(short = 'l', long, default_value = "root")]
        user: String,
        /// Seconds the command may run (with --command)
        #[arg(long, default_value_t = 300)]
        timeout: u32,
    },
}
