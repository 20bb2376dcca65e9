//! `udev status`: the GPU device nodes, who may open them, and what to do about it.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

use schemars::JsonSchema;
use serde::Serialize;

use super::{RULES, rules_path};
use crate::report::Report;

/// One device node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DeviceNode {
    /// `/dev/dri/card0`, `/dev/dri/renderD128`, `/dev/kfd`.
    pub path: String,
    /// The kernel driver (`amdgpu`, `i915`, `nvidia`...), when sysfs names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// The owner's name (or uid).
    pub owner: String,
    /// The group's name (or gid).
    pub group: String,
    /// The permission bits, octal (`0660`).
    pub mode: String,
    /// Whether the current user may read it.
    pub readable: bool,
    /// Whether the current user may write it.
    pub writable: bool,
}

/// `udev status`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UdevStatus {
    /// The current user.
    pub user: String,
    /// The device nodes found.
    pub devices: Vec<DeviceNode>,
    /// Whether the user is in the `render` group.
    pub in_render: bool,
    /// Whether the user is in the `video` group.
    pub in_video: bool,
    /// Whether charly's rules file is installed (and current).
    pub rule_installed: bool,
    /// `ok`, `no GPU`, or what is wrong.
    pub verdict: String,
    /// Commands that fix it.
    pub fixes: Vec<String>,
    /// The udevadm `install` and `remove` run (`CHARLY_UDEVADM`, PATH, /usr/bin, /sbin...), or why
    /// there is none.
    pub udevadm: String,
}

impl std::fmt::Display for UdevStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.devices.is_empty() {
            writeln!(f, "No GPU device nodes (/dev/dri/card*, /dev/dri/renderD*, /dev/kfd).")?;
        }
        for d in &self.devices {
            let access =
                format!("{}{}", if d.readable { "r" } else { "-" }, if d.writable { "w" } else { "-" });
            writeln!(
                f,
                "{:<22} {:<10} {}:{} {} access {access}",
                d.path,
                d.driver.as_deref().unwrap_or("-"),
                d.owner,
                d.group,
                d.mode
            )?;
        }
        writeln!(
            f,
            "user {}: render group {}, video group {}",
            self.user,
            yes(self.in_render),
            yes(self.in_video)
        )?;
        writeln!(f, "rule installed: {}", yes(self.rule_installed))?;
        writeln!(f, "udevadm: {}", self.udevadm)?;
        writeln!(f, "verdict: {}", self.verdict)?;
        self.fixes.iter().try_for_each(|fix| writeln!(f, "fix: {fix}"))
    }
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// The verdict when some node cannot be opened.
pub(crate) const CANNOT_OPEN: &str = "the current user cannot open some GPU nodes";

impl Report for UdevStatus {
    /// A node the user cannot open is a failure (exit status 1); no GPU is not.
    fn failure(&self) -> Option<String> {
        (self.verdict == CANNOT_OPEN).then(|| format!("{CANNOT_OPEN}: {}", self.fixes.join("; ")))
    }
}

/// `name:x:id:...` files (`/etc/passwd`, `/etc/group`) as id → name, and name → members.
pub(super) fn id_names(path: &Path) -> (BTreeMap<u32, String>, BTreeMap<String, Vec<String>>) {
    let mut names = BTreeMap::new();
    let mut members = BTreeMap::new();
    for line in std::fs::read_to_string(path).unwrap_or_default().lines() {
        let fields: Vec<&str> = line.split(':').collect();
        if let (Some(name), Some(id)) = (fields.first(), fields.get(2).and_then(|i| i.parse().ok())) {
            names.insert(id, (*name).to_owned());
            let list = fields
                .get(3)
                .map(|m| m.split(',').filter(|s| !s.is_empty()).map(str::to_owned).collect())
                .unwrap_or_default();
            members.insert((*name).to_owned(), list);
        }
    }
    (names, members)
}

/// This process's file-system uid and group ids (fsgid and supplementary groups), from
/// `/proc/self/status`: what the kernel checks a node's mode against.
fn identity() -> (u32, Vec<u32>) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| -> Vec<u32> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|rest| rest.split_whitespace().filter_map(|n| n.parse().ok()).collect())
            .unwrap_or_default()
    };
    // Real, effective, saved, file-system ids: the kernel's permission check uses the last.
    let uid = field("Uid:").get(3).copied().unwrap_or(0);
    let mut gids = field("Groups:");
    gids.extend(field("Gid:").get(3));
    (uid, gids)
}

/// Whether a process with `uid` and groups `gids` has permission `bit` (4 read, 2 write) on a
/// file of `mode` owned by `owner`:`group`, as the kernel decides it: the owner bits alone when
/// it owns the file, else the group bits alone when it is in the group, else the other bits.
fn may(mode: u32, owner: u32, group: u32, uid: u32, gids: &[u32], bit: u32) -> bool {
    let shift = if owner == uid {
        6
    } else if gids.contains(&group) {
        3
    } else {
        0
    };
    mode & (bit << shift) != 0
}

/// The name of `uid`: from `users` (the root's passwd), else the host's, else `$USER` (for
/// the user's shell to fill in; sudo runs after it expands).
fn user_name(users: &BTreeMap<u32, String>, uid: u32) -> String {
    users
        .get(&uid)
        .cloned()
        .or_else(|| id_names(Path::new("/etc/passwd")).0.get(&uid).cloned())
        .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty() && !u.contains(char::is_whitespace)))
        .unwrap_or_else(|| "\"$USER\"".to_owned())
}

/// `udev status`: reads `<root>/dev`, `<root>/sys/class/drm` and `<root>/etc` (users and groups
/// from `<root>/etc/passwd` and `<root>/etc/group`, else the host's).
pub fn status(root: &Path) -> UdevStatus {
    let etc = |name: &str| super::etc_file(root, name);
    let (users, _) = id_names(&etc("passwd"));
    let (groups, members) = id_names(&etc("group"));
    let (uid, gids) = identity();
    let user = user_name(&users, uid);
    let gid_of = |name: &str| groups.iter().find(|(_, n)| n.as_str() == name).map(|(id, _)| *id);
    let in_group = |name: &str| {
        gid_of(name).is_some_and(|g| gids.contains(&g))
            || members.get(name).is_some_and(|m| m.contains(&user))
    };
    let mut paths: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("dev/dri"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name().is_some_and(|n| {
                        n.to_string_lossy().starts_with("card") || n.to_string_lossy().starts_with("renderD")
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    let kfd = root.join("dev/kfd");
    if kfd.exists() {
        paths.push(kfd);
    }
    let devices: Vec<DeviceNode> = paths
        .iter()
        .filter_map(|p| {
            let meta = std::fs::metadata(p).ok()?;
            let name = p.file_name()?.to_string_lossy().into_owned();
            let driver = if name == "kfd" {
                Some("amdgpu".to_owned())
            } else {
                std::fs::read_link(root.join("sys/class/drm").join(&name).join("device/driver"))
                    .ok()
                    .and_then(|l| l.file_name().map(|n| n.to_string_lossy().into_owned()))
            };
            let mode = meta.mode() & 0o7777;
            let allowed = |bit: u32| uid == 0 || may(mode, meta.uid(), meta.gid(), uid, &gids, bit);
            Some(DeviceNode {
                path: Path::new("/").join(p.strip_prefix(root).unwrap_or(p)).display().to_string(),
                driver,
                owner: users.get(&meta.uid()).cloned().unwrap_or_else(|| meta.uid().to_string()),
                group: groups.get(&meta.gid()).cloned().unwrap_or_else(|| meta.gid().to_string()),
                mode: format!("{mode:04o}"),
                readable: allowed(0o4),
                writable: allowed(0o2),
            })
        })
        .collect();
    let rule_installed = std::fs::read_to_string(rules_path(root)).is_ok_and(|t| t == RULES);
    let (in_render, in_video) = (in_group("render"), in_group("video"));
    let mut fixes = Vec::new();
    let verdict = if devices.is_empty() {
        "no GPU device nodes on this host".to_owned()
    } else if devices.iter().all(|d| d.readable && d.writable) {
        "ok: the current user can open every GPU node".to_owned()
    } else {
        let cards_not_render = devices.iter().any(|d| d.path.contains("/card") && d.group != "render");
        if !rule_installed && (cards_not_render || devices.iter().any(|d| d.path.ends_with("/kfd"))) {
            fixes.push("sudo charly udev install".to_owned());
        }
        if !in_render {
            if gid_of("render").is_none() {
                fixes.push("sudo groupadd --system render".to_owned());
            }
            fixes.push(format!("sudo usermod -aG render {user}"));
        }
        if !in_video && devices.iter().any(|d| d.driver.as_deref() == Some("amdgpu")) {
            fixes.push(format!("sudo usermod -aG video {user}"));
        }
        CANNOT_OPEN.to_owned()
    };
    let udevadm = super::udevadm().map_or_else(|why| why, |p| p.display().to_string());
    UdevStatus { user, devices, in_render, in_video, rule_installed, verdict, fixes, udevadm }
}
