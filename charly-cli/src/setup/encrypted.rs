//! Encrypted volumes with gocryptfs (REFERENCE.md §2): a volume of `type: encrypted` lives in
//! a host directory of its deployment (`host:`, or
//! `~/.local/share/charly/encrypted/charly-<box>[-<instance>]-<volume>`, with an owner file:
//! [`crate::deployfile::crypt`]) holding `cipher/` (gocryptfs's encrypted tree) and `plain/`
//! (its mount point, bind-mounted into the container).
//!
//! Each deployment has its own passphrase: credential `charly/enc/<box>` for the box's own,
//! `charly/enc/<box>/<instance>` for an instance ([`passphrase_key`]), or `$GOCRYPTFS_PASSWORD`;
//! it goes to gocryptfs on stdin, never on a command line. So `config passwd -i A` re-keys A's
//! volumes and stores A's passphrase, and every other instance keeps its own (the reference
//! shared one per image, and a re-key of one instance locked the others out).

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// The credential service of encryption passphrases.
pub const ENC_SERVICE: &str = "charly/enc";

/// The environment variable that overrides the stored passphrase.
pub const PASSPHRASE_ENV: &str = "GOCRYPTFS_PASSWORD";

pub use crate::deployfile::crypt::{DirOwner, host_dir, initialized, mark, mounted, not_ours, owner};

/// The credential key (under [`ENC_SERVICE`]) of `target`'s passphrase: its deployment name,
/// `<box>` or `<box>/<instance>`.
pub fn passphrase_key(target: &crate::engine::Target) -> String {
    target.key()
}

/// Runs `gocryptfs args` with `input` on stdin; its stderr on failure.
fn gocryptfs(args: &[&std::ffi::OsStr], input: &str) -> Result<(), String> {
    let mut child = Command::new("gocryptfs")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!("gocryptfs cannot run ({e}); install it (Debian: apt-get install gocryptfs fuse3)")
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input.as_bytes());
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        let text = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = text.lines().filter(|l| !l.contains("syslog")).collect();
        Err(lines.join("; "))
    }
}

/// Makes `dir/cipher` (initialised with `passphrase`) and `dir/plain`; whether `dir` was
/// created by this call.
///
/// # Errors
///
/// gocryptfs's complaint.
pub fn init(dir: &Path, passphrase: &str) -> Result<bool, String> {
    let created = !dir.exists();
    std::fs::create_dir_all(dir.join("cipher")).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir.join("plain")).map_err(|e| e.to_string())?;
    if !initialized(dir) {
        let cipher = dir.join("cipher");
        gocryptfs(&["-init".as_ref(), "-q".as_ref(), cipher.as_os_str()], &format!("{passphrase}\n"))?;
    }
    Ok(created)
}

/// Mounts `dir/cipher` on `dir/plain`.
///
/// # Errors
///
/// gocryptfs's complaint (a wrong passphrase says so).
pub fn mount(dir: &Path, passphrase: &str) -> Result<(), String> {
    std::fs::create_dir_all(dir.join("plain")).map_err(|e| e.to_string())?;
    let (cipher, plain) = (dir.join("cipher"), dir.join("plain"));
    gocryptfs(&["-q".as_ref(), cipher.as_os_str(), plain.as_os_str()], &format!("{passphrase}\n"))
}

/// Unmounts `dir/plain`.
///
/// # Errors
///
/// fusermount3's complaint (busy, ...).
pub fn unmount(dir: &Path) -> Result<(), String> {
    let out = Command::new("fusermount3")
        .arg("-u")
        .arg(dir.join("plain"))
        .output()
        .map_err(|e| format!("fusermount3 cannot run ({e}); install fuse3"))?;
    if out.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&out.stderr).trim().to_owned()) }
}

/// Changes the passphrase of `dir/cipher` from `old` to `new`.
///
/// # Errors
///
/// gocryptfs's complaint (a wrong old passphrase says so).
pub fn passwd(dir: &Path, old: &str, new: &str) -> Result<(), String> {
    let cipher = dir.join("cipher");
    gocryptfs(&["-passwd".as_ref(), "-q".as_ref(), cipher.as_os_str()], &format!("{old}\n{new}\n"))
}
