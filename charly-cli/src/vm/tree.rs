//! What a box image's file system holds for `vm build` ([`super::build`]): its kernel and
//! initramfs, its init, the space its files take, and fresh SSH host keys written into it.
//! Paths in the tree are looked at without following symlinks: an image's `/boot/vmlinuz`
//! leading to `/boot/...` would otherwise name the host's file.

use std::path::{Path, PathBuf};

use super::{VmError, tool};

/// A regular file (not a symlink, which could lead out of the tree).
pub(super) fn is_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

/// A real directory (not a symlink).
pub(super) fn is_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// The newest kernel in `tree`: its version, its file and its initramfs (when there is one).
pub(super) fn find_boot(tree: &Path) -> Option<(String, PathBuf, Option<PathBuf>)> {
    let mut kernels: Vec<(String, PathBuf)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(tree.join("boot")) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(version) = name.strip_prefix("vmlinuz-").filter(|v| !v.is_empty())
                && is_file(&e.path())
            {
                kernels.push((version.to_owned(), e.path()));
            }
        }
    }
    for modules in ["usr/lib/modules", "lib/modules"] {
        if !is_dir(&tree.join(modules)) {
            continue;
        }
        for e in std::fs::read_dir(tree.join(modules)).into_iter().flatten().flatten() {
            let path = e.path().join("vmlinuz");
            if is_file(&path) {
                kernels.push((e.file_name().to_string_lossy().into_owned(), path));
            }
        }
    }
    let (version, kernel) = kernels.into_iter().max_by(|a, b| version_cmp(&a.0, &b.0))?;
    let initrd = [
        format!("boot/initrd.img-{version}"),
        format!("boot/initramfs-{version}.img"),
        format!("usr/lib/modules/{version}/initramfs.img"),
        format!("lib/modules/{version}/initramfs.img"),
    ]
    .into_iter()
    .map(|p| tree.join(p))
    .find(|p| is_file(p));
    Some((version, kernel, initrd))
}

/// Versions compared by their runs of digits as numbers: `6.10.0` after `6.9.1`.
fn version_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn parts(s: &str) -> Vec<(u64, String)> {
        let mut out = Vec::new();
        let mut rest = s;
        while !rest.is_empty() {
            let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            let (number, tail) = rest.split_at(digits);
            let text = tail.find(|c: char| c.is_ascii_digit()).unwrap_or(tail.len());
            out.push((number.parse().unwrap_or(0), tail[..text].to_owned()));
            rest = &tail[text..];
        }
        out
    }
    parts(a).cmp(&parts(b))
}

/// The image's init: `systemd` when `/sbin/init` leads to systemd, else the path itself.
pub(super) fn find_init(tree: &Path) -> Option<String> {
    for path in ["sbin/init", "usr/sbin/init"] {
        let at = tree.join(path);
        if let Ok(target) = std::fs::read_link(&at) {
            let target = target.to_string_lossy().into_owned();
            return Some(if target.contains("systemd") { "systemd".into() } else { target });
        }
        if is_file(&at) {
            return Some(format!("/{path}"));
        }
    }
    None
}

/// Fresh host keys in `tree/etc/ssh` (the image's own are removed): the `known_hosts` lines
/// that pin them under the alias `name`.
pub(super) async fn host_keys(tree: &Path, name: &str) -> Result<String, VmError> {
    let etc = tree.join("etc");
    let ssh = etc.join("ssh");
    // ssh-keygen follows paths: a symlinked etc or etc/ssh could lead out of the tree.
    if !is_dir(&etc) || (ssh.exists() && !is_dir(&ssh)) {
        return Err(VmError::Usage(format!(
            "the image's /etc or /etc/ssh is not a directory ({}); charly writes the SSH host keys there",
            ssh.display()
        )));
    }
    std::fs::create_dir_all(&ssh)?;
    for e in std::fs::read_dir(&ssh)?.flatten() {
        if e.file_name().to_string_lossy().starts_with("ssh_host_") {
            std::fs::remove_file(e.path())?;
        }
    }
    let args = [std::ffi::OsString::from("-A"), "-f".into(), tree.as_os_str().to_owned()];
    let what = "ssh-keygen -A (the VM's SSH host keys)";
    tool::checked(tool::command("ssh-keygen", &args), "ssh-keygen", tool::BASE_HINT, what).await?;
    let mut lines = String::new();
    let mut names: Vec<_> = std::fs::read_dir(&ssh)?.flatten().map(|e| e.file_name()).collect();
    names.sort();
    for file in names {
        let file = file.to_string_lossy();
        if file.starts_with("ssh_host_") && file.ends_with("_key.pub") {
            let text = std::fs::read_to_string(ssh.join(&*file))?;
            let mut fields = text.split_whitespace();
            if let (Some(kind), Some(key)) = (fields.next(), fields.next()) {
                lines.push_str(&format!("{name} {kind} {key}\n"));
            }
        }
    }
    Ok(lines)
}

/// Bytes the files of `tree` occupy (allocated blocks; symlinks not followed).
pub(super) fn usage(tree: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt as _;
    let mut total = 0;
    let mut dirs = vec![tree.to_owned()];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let Ok(meta) = e.path().symlink_metadata() else { continue };
            total += meta.blocks() * 512;
            if meta.is_dir() {
                dirs.push(e.path());
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_by_number() {
        assert!(version_cmp("6.10.0-1-amd64", "6.9.12-1-amd64").is_gt());
        assert!(version_cmp("6.1.0-57-cloud-amd64", "6.1.0-9-cloud-amd64").is_gt());
        assert!(version_cmp("5.4", "5.4").is_eq());
    }

    #[test]
    fn the_newest_kernel_and_its_initramfs_are_found_and_symlinks_are_not_followed() {
        let tree = tempfile::tempdir().unwrap();
        let t = tree.path();
        std::fs::create_dir_all(t.join("boot")).unwrap();
        std::fs::create_dir_all(t.join("usr/lib/modules/6.12.0/")).unwrap();
        std::fs::write(t.join("boot/vmlinuz-6.1.0-57-amd64"), "k").unwrap();
        std::fs::write(t.join("boot/initrd.img-6.1.0-57-amd64"), "i").unwrap();
        std::fs::write(t.join("usr/lib/modules/6.12.0/vmlinuz"), "k").unwrap();
        let (version, kernel, initrd) = find_boot(t).unwrap();
        assert_eq!((version.as_str(), initrd), ("6.12.0", None));
        assert!(kernel.ends_with("usr/lib/modules/6.12.0/vmlinuz"));
        std::fs::write(t.join("usr/lib/modules/6.12.0/initramfs.img"), "i").unwrap();
        assert!(find_boot(t).unwrap().2.unwrap().ends_with("6.12.0/initramfs.img"));
        // A symlink to the host's kernel is not the image's kernel.
        let other = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/boot/vmlinuz", other.path().join("vmlinuz-9.9")).unwrap();
        std::fs::create_dir(other.path().join("boot")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", other.path().join("boot/vmlinuz-9.9")).unwrap();
        assert_eq!(find_boot(other.path()), None);
        assert_eq!(find_init(other.path()), None);
        std::fs::create_dir_all(other.path().join("sbin")).unwrap();
        std::os::unix::fs::symlink("/lib/systemd/systemd", other.path().join("sbin/init")).unwrap();
        assert_eq!(find_init(other.path()).as_deref(), Some("systemd"));
    }
}
