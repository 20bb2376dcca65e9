//! `vm build`: a bootable disk from a box's built image.
//!
//! 1. The image's file system: a container created from it (never started) is `podman export`ed
//!    through the engine into `tar -x` as root, so owners, modes and file capabilities stay.
//! 2. Its kernel and initramfs (`/boot/vmlinuz-V` with `/boot/initrd.img-V` or
//!    `/boot/initramfs-V.img`, or `/usr/lib/modules/V/vmlinuz` with `initramfs.img`; the newest
//!    V) are copied beside the disk for direct kernel boot; its init must be there.
//! 3. With an SSH server in the image, its host keys are replaced by fresh ones
//!    (`ssh-keygen -A -f <tree>`) whose public halves go to `known_hosts`.
//! 4. `mkfs.ext4 -d <tree>` makes the root file system in a sparse file of `--size` (no loop
//!    device, no mount), `qemu-img convert` makes it qcow2 (or it stays raw).
//!
//! The tree and the raw file system are made in a scratch directory on `/dev/shm` when that
//! tmpfs (and the host's available memory) has room for them, else beside the VM directories:
//! on this machine unpacking and deleting the ~12,000 files of a 360 MB Debian image took
//! 11.6 s and 29.9 s on disk, 1.9 s and 0.2 s on tmpfs. The disk, kernel and initramfs are made
//! in a temporary directory beside the VM directories and moved in at the end: a build that
//! fails or is cancelled leaves no disk, no tree, no directory and no export container behind,
//! and an earlier disk of the VM stays until the new one is whole.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use super::state::{Build, Dir, now};
use super::tree::{find_boot, find_init, host_keys, is_dir, is_file, usage};
use super::{QEMU_HINT, Vm, VmBuilt, VmError, block, qemu, tool};
use crate::cli::DiskFormat;
use crate::context::Ctx;
use crate::engine::{Engine, EngineError};
use crate::hostfile;
use crate::project::Project;
use crate::project::runtime::label;

/// The smallest and largest disk `--size` takes: 256 MiB, 16 TiB.
pub const DISK_RANGE: (u64, u64) = (256 << 20, 16 << 40);

/// The kernel command line: the whole disk is the root file system, the first serial port the console.
pub const CMDLINE: &str = "root=/dev/vda rootfstype=ext4 rw console=ttyS0,115200";

/// The arguments of `vm build`.
#[derive(Clone, Copy, Debug)]
pub struct BuildRequest<'a> {
    /// The box.
    pub box_name: &'a str,
    /// The instance.
    pub instance: Option<&'a str>,
    /// `--size` (default: the setting vm.disk_size).
    pub size: Option<&'a str>,
    /// The format.
    pub format: DiskFormat,
}

const STEPS: f64 = 5.0;

/// `vm build`: see the module docs.
///
/// # Errors
///
/// A bad name or size, an unknown box, an image never built ([`EngineError::NoImage`]), an
/// image without a kernel, initramfs or init, a VM that runs, not root, a failing tool.
pub fn build(ctx: &Ctx, project: &Project, root: &Path, r: &BuildRequest<'_>) -> Result<VmBuilt, VmError> {
    let started = Instant::now();
    let vm = Vm::new(root, r.box_name, r.instance)?;
    let settings = super::settings(ctx)?;
    let rootfs = settings.value("vm.rootfs");
    if rootfs != "ext4" {
        return Err(VmError::Usage(format!(
            "setting vm.rootfs is {rootfs:?}: vm build makes ext4 only (mkfs.ext4 -d fills it without a loop device); \
             `charly settings set vm.rootfs ext4`"
        )));
    }
    let size_text = match r.size {
        Some(size) => size.to_owned(),
        None => settings.value("vm.disk_size"),
    };
    let size = super::parse_size(&size_text)
        .filter(|b| (DISK_RANGE.0..=DISK_RANGE.1).contains(b))
        .ok_or_else(|| {
            let what =
                super::create::given(r.size.is_some(), "--size", "vm.disk_size", &format!("{size_text:?}"));
            VmError::Usage(format!("{what}: a disk is 256M to 16T (e.g. 4G, 10 GiB)"))
        })?;
    if !is_root() {
        return Err(VmError::Usage(
            "vm build writes the image's files with their owners into the disk, which needs root: run it as root, \
             or inside podman's user namespace (`podman unshare charly vm build ...`)"
                .into(),
        ));
    }
    let _lock = super::lock(ctx, root, &vm)?;
    if let Some(pid) = qemu::running(&vm.dir)? {
        let fix = format!("stop it first (`charly vm stop {}`): build replaces its disk", vm.args());
        return Err(VmError::Running { name: vm.name().to_owned(), what: format!("qemu pid {pid}"), fix });
    }
    let resolved = project.resolve_box(r.box_name)?;
    let engine = Engine::podman(ctx.cancel_token());
    sweep(ctx, &engine, root, vm.name())?;
    let image = block(ctx, async { Ok(engine.image(&resolved.image).await?) })?.ok_or_else(|| {
        EngineError::NoImage { box_name: r.box_name.to_owned(), image: resolved.image.clone() }
    })?;
    hostfile::create_private_dir(root)?;
    let private = std::fs::Permissions::from_mode(0o700);
    let work = tempfile::Builder::new()
        .prefix(&format!(".{}.build-", vm.name()))
        .permissions(private)
        .tempdir_in(root)?;
    let shm = scratch(vm.name(), image.size);
    let scratch = shm.as_ref().map_or(work.path(), |d| d.path());
    let tree = scratch.join("tree");
    std::fs::create_dir(&tree)?;

    ctx.progress(0.0, Some(STEPS), format!("exporting {}", resolved.image));
    block(ctx, export(&engine, &image.id, vm.name(), &tree, work.path()))?;
    std::fs::set_permissions(&tree, std::fs::Permissions::from_mode(0o755))?;

    ctx.progress(1.0, Some(STEPS), "finding the kernel, making SSH host keys");
    let no_kernel = || VmError::NoKernel {
        box_name: r.box_name.to_owned(),
        image: resolved.image.clone(),
        fix: super::no_kernel_fix(r.box_name, &tree),
    };
    let (version, kernel, initrd) = find_boot(&tree).ok_or_else(no_kernel)?;
    let initrd = initrd.ok_or_else(|| {
        VmError::Usage(format!(
            "box {}: image {} has kernel {version} but no initramfs for it (/boot/initrd.img-{version}, \
             /boot/initramfs-{version}.img or /usr/lib/modules/{version}/initramfs.img); install initramfs-tools \
             (Debian) or dracut (Fedora) beside the kernel, as {} does",
            r.box_name,
            resolved.image,
            super::kernel_candy(r.box_name)
        ))
    })?;
    let init = find_init(&tree).ok_or_else(|| {
        VmError::Usage(format!(
            "box {}: image {} has no /sbin/init for the kernel to start; add an init: {}",
            r.box_name,
            resolved.image,
            super::kernel_candy(r.box_name)
        ))
    })?;
    std::fs::copy(&kernel, work.path().join("vmlinuz"))?;
    std::fs::copy(&initrd, work.path().join("initrd.img"))?;
    let sshd = ["usr/sbin/sshd", "usr/bin/sshd"].iter().any(|p| is_file(&tree.join(p)));
    let known_hosts = if sshd { Some(block(ctx, host_keys(&tree, vm.name()))?) } else { None };
    let used = usage(&tree);
    // ext4's own metadata (inode tables, journal) on top of the files, and some room.
    let least = used + used / 5 + (64 << 20);
    if size < least {
        return Err(VmError::Usage(format!(
            "--size {size_text}: image {}'s files take {} MiB, so the disk needs at least {} MiB (e.g. --size {}M)",
            resolved.image,
            used >> 20,
            least >> 20,
            (least >> 20) + 1
        )));
    }

    ctx.progress(2.0, Some(STEPS), format!("making the ext4 file system ({} MiB of files)", used >> 20));
    let raw = scratch.join("root.ext4");
    let mut args: Vec<std::ffi::OsString> =
        ["-q", "-F", "-t", "ext4", "-L", "charly-root", "-d"].map(Into::into).to_vec();
    args.extend([
        tree.clone().into_os_string(),
        raw.clone().into_os_string(),
        format!("{}k", size >> 10).into(),
    ]);
    let what = format!("mkfs.ext4 -d {} (making the root file system)", tree.display());
    block(ctx, async {
        tool::checked(tool::command("mke2fs", &args), "mke2fs", tool::BASE_HINT, &what).await
    })?;
    // The tree is in the file system now: free its space before the conversion copies the disk.
    std::fs::remove_dir_all(&tree)?;

    let (disk, format) = match r.format {
        DiskFormat::Raw => ("disk.raw", "raw"),
        DiskFormat::Qcow2 => ("disk.qcow2", "qcow2"),
    };
    if shm.is_none() && r.format == DiskFormat::Raw {
        std::fs::rename(&raw, work.path().join(disk))?;
    } else {
        // qemu-img writes holes for zeros: a raw disk stays sparse across file systems.
        ctx.progress(3.0, Some(STEPS), format!("writing the {format} disk"));
        let args = [
            "convert".into(),
            "-f".into(),
            "raw".into(),
            "-O".into(),
            format.into(),
            raw.clone().into_os_string(),
            work.path().join(disk).into_os_string(),
        ];
        let what = format!("qemu-img convert (the file system to a {format} disk)");
        block(ctx, async {
            tool::checked(tool::command("qemu-img", &args), "qemu-img", QEMU_HINT, &what).await
        })?;
        std::fs::remove_file(&raw)?;
    }
    let ports: Vec<u16> = image
        .labels
        .as_ref()
        .and_then(|l| l.get(label::PORT))
        .and_then(|v| serde_json::from_str(v).ok())
        .unwrap_or_default();
    let record = Build {
        r#box: r.box_name.to_owned(),
        image: resolved.image.clone(),
        image_id: image.id.trim_start_matches("sha256:").chars().take(12).collect(),
        disk: disk.to_owned(),
        format: format.to_owned(),
        size_bytes: size,
        kernel_version: version,
        cmdline: CMDLINE.to_owned(),
        init,
        sshd,
        ports,
        built_at: now(),
    };
    ctx.progress(4.0, Some(STEPS), "moving the disk into place");
    ctx.check_cancelled().map_err(|_| VmError::Cancelled)?;
    install(work.path(), &vm.dir, &record, known_hosts.as_deref())?;
    let disk_path = vm.dir.file(disk);
    use std::os::unix::fs::MetadataExt as _;
    let disk_bytes = std::fs::metadata(&disk_path).map(|m| m.blocks() * 512).unwrap_or(0);
    Ok(VmBuilt {
        name: vm.name().to_owned(),
        r#box: record.r#box,
        instance: vm.target.instance.clone(),
        image: record.image,
        image_id: record.image_id,
        disk: disk_path,
        format: record.format,
        size_bytes: size,
        disk_bytes,
        files_bytes: used,
        kernel_version: record.kernel_version,
        init: record.init,
        sshd,
        ports: record.ports,
        secs: started.elapsed().as_secs_f64(),
    })
}

/// A scratch directory on `/dev/shm` for an image of `image_bytes` (its tree and its raw file
/// system, ~2.5 times its size), when that tmpfs has the room and the host's available memory is
/// twice that; `None` otherwise (the scratch is then beside the VM directories).
fn scratch(name: &str, image_bytes: u64) -> Option<tempfile::TempDir> {
    let need = image_bytes.saturating_mul(5) / 2 + (256 << 20);
    let shm = rustix::fs::statvfs("/dev/shm").ok()?;
    let room = shm.f_bavail.saturating_mul(shm.f_frsize);
    let available = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
        let line = t.lines().find(|l| l.starts_with("MemAvailable:"))?;
        line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kib| kib << 10)
    })?;
    if image_bytes == 0 || room < need || available < need.saturating_mul(2) {
        return None;
    }
    use std::os::unix::fs::PermissionsExt as _;
    let private = std::fs::Permissions::from_mode(0o700);
    tempfile::Builder::new()
        .prefix(&format!(".{name}.build-"))
        .permissions(private)
        .tempdir_in("/dev/shm")
        .ok()
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// `podman export` of a container of `image` into `tar -x -C tree`, piped.
/// The container's id is kept in `work/export-container` for [`sweep`].
async fn export(engine: &Engine, image: &str, name: &str, tree: &Path, work: &Path) -> Result<(), VmError> {
    let container = engine.create_for_export(image, &export_label(name)).await?;
    std::fs::write(work.join(EXPORT_ID), &container.id)?;
    let program = engine.program();
    let mut export = engine.export_command(&container).spawn().map_err(|e| VmError::Missing {
        program: program.clone(),
        why: e.to_string(),
        hint: crate::engine::INSTALL_HINT,
    })?;
    let stream: Stdio = export.stdout.take().expect("stdout is piped").try_into()?;
    let args = [
        "-x".into(),
        "-f".into(),
        "-".into(),
        "-C".into(),
        tree.as_os_str().to_owned(),
        "--numeric-owner".into(),
        "--same-owner".into(),
        "--same-permissions".into(),
        "--xattrs".into(),
        "--xattrs-include=security.capability".into(),
    ];
    let mut tar = tool::command::<std::ffi::OsString>("tar", &args);
    tar.stdin(stream);
    let (untarred, exported) =
        tokio::join!(tool::output(tar, "tar", tool::BASE_HINT), export.wait_with_output());
    let exported = exported?;
    if !exported.status.success() {
        return Err(tool::failed(&format!("{program} export (the image's file system)"), &exported));
    }
    let untarred = untarred?;
    if !untarred.status.success() {
        return Err(tool::failed(
            &format!("tar -x into {} (unpacking the image)", tree.display()),
            &untarred,
        ));
    }
    drop(container);
    Ok(())
}

/// The label of the export containers of VM `name`'s builds.
fn export_label(name: &str) -> String {
    format!("ai.opencharly.vm-build={name}")
}

/// Removes what a build of VM `name` that was killed midway (SIGKILL, a host crash: nothing ran
/// its cleanup) left: the programs it had started that still write there (a `tar` unpacking,
/// `mke2fs`, `qemu-img`: their command lines name the directory; the `podman export` feeding
/// the tar ends with it), its work and scratch directories (`.<name>.build-*` in `root` and
/// `/dev/shm`) and its export containers. The VM's lock is held, so no build of it runs now.
/// `vm destroy` runs it too, so what an interrupted build left can be removed without
/// building again. The directories removed.
pub(super) fn sweep(ctx: &Ctx, engine: &Engine, root: &Path, name: &str) -> Result<Vec<PathBuf>, VmError> {
    let stale = leftovers(root, name);
    // The export first: a `podman export` whose reader was killed does not end by itself, and
    // holds its container's lock (every `podman ps` waits for it).
    let mut needles: Vec<Vec<u8>> = stale
        .iter()
        .filter_map(|d| std::fs::read(d.join(EXPORT_ID)).ok())
        .filter(|id| id.len() >= 12 && id.iter().all(u8::is_ascii_hexdigit))
        .collect();
    needles.extend(stale.iter().map(|d| d.as_os_str().as_encoded_bytes().to_vec()));
    kill_naming(&needles);
    for dir in &stale {
        std::fs::remove_dir_all(dir)?;
    }
    block(ctx, async { Ok(engine.remove_labelled(&export_label(name)).await?) })?;
    Ok(stale)
}

/// The work and scratch directories of VM `name`'s builds (`.<name>.build-*` in `root` and in
/// `/dev/shm`): with the VM's lock held, what a build that was killed left.
pub(super) fn leftovers(root: &Path, name: &str) -> Vec<PathBuf> {
    let prefix = format!(".{name}.build-");
    let mut stale = Vec::new();
    for dir in [root, Path::new("/dev/shm")] {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if e.file_name().to_string_lossy().starts_with(&prefix) && is_dir(&e.path()) {
                stale.push(e.path());
            }
        }
    }
    stale
}

/// Where a build keeps its export container's id, in its work directory.
const EXPORT_ID: &str = "export-container";

/// Ends the processes whose command line holds one of `needles`: SIGTERM, and SIGKILL for those
/// left after 3 s.
fn kill_naming(needles: &[Vec<u8>]) {
    if needles.is_empty() {
        return;
    }
    let names = |cmdline: &[u8]| needles.iter().any(|n| cmdline.windows(n.len()).any(|w| w == n.as_slice()));
    let users = || -> Vec<rustix::process::Pid> {
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let pid = e.file_name().to_str()?.parse::<i32>().ok()?;
                let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
                let alive = super::qemu::not_a_zombie(pid as u32);
                (alive && names(&cmdline)).then_some(pid)
            })
            .filter_map(rustix::process::Pid::from_raw)
            .collect()
    };
    // SIGTERM first: podman then lets go of its container's lock as it ends.
    for (signal, grace) in [(rustix::process::Signal::TERM, 3), (rustix::process::Signal::KILL, 5)] {
        for pid in users() {
            let _ = rustix::process::kill_process(pid, signal);
        }
        let deadline = Instant::now() + std::time::Duration::from_secs(grace);
        while !users().is_empty() && Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

/// Moves the disk, kernel and initramfs from `work` into the VM's directory and writes
/// `known_hosts` and `build.json` (last); a directory this made is removed again on failure.
fn install(work: &Path, dir: &Dir, record: &Build, known_hosts: Option<&str>) -> Result<(), VmError> {
    let existed = dir.0.is_dir();
    hostfile::create_private_dir(&dir.0)?;
    let result = (|| {
        for old in ["disk.qcow2", "disk.raw"] {
            if old != record.disk {
                let _ = std::fs::remove_file(dir.file(old));
            }
        }
        for file in [record.disk.as_str(), "vmlinuz", "initrd.img"] {
            std::fs::rename(work.join(file), dir.file(file))?;
        }
        match known_hosts {
            Some(lines) => hostfile::write_atomic(&dir.file("known_hosts"), lines.as_bytes(), 0o600)?,
            None => {
                let _ = std::fs::remove_file(dir.file("known_hosts"));
            }
        }
        dir.write("build.json", record)
    })();
    if result.is_err() && !existed {
        let _ = std::fs::remove_dir_all(&dir.0);
    }
    result
}
