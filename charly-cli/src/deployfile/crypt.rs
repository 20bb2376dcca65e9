//! Where a deployment's encrypted volumes live on the host, and whether one is mounted: what
//! `config.*` (which makes and mounts them, [`crate::setup::encrypted`]) and a direct `start`
//! (which bind-mounts the plain directory) both need.

use std::path::{Path, PathBuf};

/// The host directory of encrypted volume `volume` of `box_name` (instances share it).
pub fn host_dir(box_name: &str, volume: &str, host: Option<&str>) -> PathBuf {
    match host {
        Some(h) => PathBuf::from(h),
        None => crate::hostfile::home()
            .join(".local/share/charly/encrypted")
            .join(format!("charly-{}-{volume}", box_name.replace('/', "-"))),
    }
}

/// Whether `dir/cipher` is an initialised gocryptfs tree.
pub fn initialized(dir: &Path) -> bool {
    dir.join("cipher/gocryptfs.conf").is_file()
}

/// Whether `dir/plain` is a gocryptfs mount (`/proc/mounts`).
pub fn mounted(dir: &Path) -> bool {
    let plain = dir.join("plain");
    let plain = plain.canonicalize().unwrap_or(plain);
    std::fs::read_to_string("/proc/mounts").unwrap_or_default().lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.len() > 2 && f[2] == "fuse.gocryptfs" && Path::new(&f[1].replace("\\040", " ")) == plain
    })
}
