//! `charly udev ...`: the udev rules that give the `render` group access to the GPU nodes
//! rootless containers need (REFERENCE.md §8). The file is
//! `<root>/etc/udev/rules.d/99-charly-container-access.rules`; `--root` (default `/`) lets tests
//! and packagers write elsewhere. Installing is idempotent byte for byte; udev is reloaded and
//! the `drm` and `kfd` subsystems re-triggered only for the real root.

mod status;

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Serialize;

pub use status::{DeviceNode, UdevStatus, status};

use crate::report::Report;

/// The rules file's name.
pub const RULES_NAME: &str = "99-charly-container-access.rules";

/// The first line of charly's rules file: how `install` and `remove` know it is charly's.
pub const HEADER: &str =
    "# Written by charly (`charly udev install`): GPU device access for rootless containers.";

/// The rules.
pub const RULES: &str = "\
# Written by charly (`charly udev install`): GPU device access for rootless containers.
# Members of the render group may open the DRM card nodes and AMD's KFD compute node.
# Remove with `charly udev remove`.
SUBSYSTEM==\"drm\", KERNEL==\"card[0-9]*\", GROUP=\"render\", MODE=\"0660\"
SUBSYSTEM==\"kfd\", KERNEL==\"kfd\", GROUP=\"render\", MODE=\"0660\"
";

/// Why a `udev` command could not do its work.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UdevError {
    /// The file at the rules path is not charly's.
    #[error("{} exists and is not charly's (its first line is not charly's header): left as it is; \
             move it away to let charly manage this file", .0.display())]
    NotOurs(PathBuf),
    /// Writing under /etc needs root.
    #[error("cannot write {}: permission denied; run `sudo charly udev {verb}`", path.display())]
    NeedsRoot {
        /// The file.
        path: PathBuf,
        /// `install` or `remove`.
        verb: &'static str,
    },
    /// Another I/O error.
    #[error("{0}")]
    Io(std::io::Error),
}

/// `<root>/etc/udev/rules.d/<RULES_NAME>`.
pub fn rules_path(root: &Path) -> PathBuf {
    root.join("etc/udev/rules.d").join(RULES_NAME)
}

/// `udev generate`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Rules {
    /// Where `install` writes them.
    pub path: String,
    /// The rules file's content.
    pub rules: String,
}

impl std::fmt::Display for Rules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.rules)
    }
}

impl Report for Rules {}

/// `udev install|remove`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UdevChanged {
    /// The rules file.
    pub path: String,
    /// `written`, `unchanged`, `removed`, `absent`.
    pub action: String,
    /// The `udevadm` commands run (none for another `--root`, or when nothing changed).
    pub udevadm: Vec<String>,
    /// Why reloading failed, when it did (no udevd running, say); the file is in place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reload_error: Option<String>,
    /// What will keep the rules from working (no `render` group: udev ignores `GROUP="render"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl std::fmt::Display for UdevChanged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.action.as_str() {
            "written" => writeln!(f, "Wrote {}", self.path)?,
            "unchanged" => writeln!(f, "{} is up to date", self.path)?,
            "removed" => writeln!(f, "Removed {}", self.path)?,
            _ => writeln!(f, "{} is not installed", self.path)?,
        }
        match (&self.reload_error, self.udevadm.is_empty()) {
            (Some(why), _) => writeln!(f, "udev was not reloaded: {why}"),
            (None, false) => writeln!(f, "Reloaded udev rules and triggered device re-evaluation"),
            (None, true) => Ok(()),
        }
    }
}

impl Report for UdevChanged {
    fn warnings(&self) -> Vec<String> {
        let reload = self.reload_error.iter().map(|e| format!("udev was not reloaded: {e}"));
        reload.chain(self.warnings.iter().cloned()).collect()
    }
}

/// `<root>/etc/<name>` when it exists, else the host's `/etc/<name>`.
pub(crate) fn etc_file(root: &Path, name: &str) -> PathBuf {
    let inside = root.join("etc").join(name);
    if inside.is_file() { inside } else { Path::new("/etc").join(name) }
}

/// The warnings of installed rules: a missing `render` group.
fn group_warnings(root: &Path) -> Vec<String> {
    let (_, members) = status::id_names(&etc_file(root, "group"));
    if members.contains_key("render") {
        Vec::new()
    } else {
        vec![format!(
            "there is no `render` group in {}: udev ignores GROUP=\"render\" (udevadm verify: Unknown group \
             'render') until it exists; create it with `sudo groupadd --system render`",
            etc_file(root, "group").display()
        )]
    }
}

/// The udevadm charly runs: `CHARLY_UDEVADM` (as scripts/runtimes.sh documents), else `udevadm`
/// on PATH, else /usr/bin, /bin, /usr/sbin, /sbin (not on a user's PATH on every system).
///
/// # Errors
///
/// Where it looked, and how to install it.
pub fn udevadm() -> Result<PathBuf, String> {
    if let Some(given) = std::env::var_os("CHARLY_UDEVADM").filter(|v| !v.is_empty()) {
        let path = PathBuf::from(&given);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!("CHARLY_UDEVADM={} is not a file: point it at udevadm", path.display()))
        };
    }
    crate::hostfile::which("udevadm")
        .or_else(|| {
            ["/usr/bin/udevadm", "/bin/udevadm", "/usr/sbin/udevadm", "/sbin/udevadm"]
                .into_iter()
                .map(PathBuf::from)
                .find(|p| p.is_file())
        })
        .ok_or_else(|| {
            "udevadm not found (CHARLY_UDEVADM, PATH, /usr/bin, /bin, /usr/sbin, /sbin): install udev \
             (Debian: apt-get install udev) or set CHARLY_UDEVADM to its path"
                .to_owned()
        })
}

/// `udev generate`.
pub fn generate(root: &Path) -> Rules {
    Rules { path: rules_path(root).display().to_string(), rules: RULES.into() }
}

fn io<'p>(path: &'p Path, verb: &'static str) -> impl Fn(std::io::Error) -> UdevError + 'p {
    move |e| match e.kind() {
        std::io::ErrorKind::PermissionDenied => UdevError::NeedsRoot { path: path.to_owned(), verb },
        _ => UdevError::Io(crate::hostfile::with_path(e, "write", path)),
    }
}

fn is_ours(text: &str) -> bool {
    text.lines().next() == Some(HEADER)
}

/// Reloads udev and re-triggers drm and kfd, when `root` is the real root.
fn reload(root: &Path) -> (Vec<String>, Option<String>) {
    if root != Path::new("/") {
        return (Vec::new(), None);
    }
    let mut ran = Vec::new();
    let program = match udevadm() {
        Ok(p) => p,
        Err(why) => return (ran, Some(why)),
    };
    for args in [
        &["control", "--reload-rules"][..],
        &["trigger", "--subsystem-match=drm"],
        &["trigger", "--subsystem-match=kfd"],
    ] {
        ran.push(format!("udevadm {}", args.join(" ")));
        match std::process::Command::new(&program).args(args).output() {
            Ok(out) if out.status.success() => {}
            Ok(out) => return (ran, Some(String::from_utf8_lossy(&out.stderr).trim().to_owned())),
            Err(e) => return (ran, Some(format!("cannot run {}: {e}", program.display()))),
        }
    }
    (ran, None)
}

/// `udev install`: writes the rules unless the file is already byte-identical.
///
/// # Errors
///
/// [`UdevError::NotOurs`] for a different file that is not charly's; [`UdevError::NeedsRoot`].
pub fn install(root: &Path) -> Result<UdevChanged, UdevError> {
    let path = rules_path(root);
    match std::fs::read_to_string(&path) {
        Ok(text) if text == RULES => {
            return Ok(UdevChanged {
                path: path.display().to_string(),
                action: "unchanged".into(),
                udevadm: Vec::new(),
                reload_error: None,
                warnings: group_warnings(root),
            });
        }
        Ok(text) if !is_ours(&text) => return Err(UdevError::NotOurs(path)),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&path, "install")(e)),
        _ => {}
    }
    let dir = path.parent().expect("the rules path has a parent");
    std::fs::create_dir_all(dir).map_err(io(&path, "install"))?;
    crate::hostfile::write_atomic(&path, RULES.as_bytes(), 0o644).map_err(io(&path, "install"))?;
    let (udevadm, reload_error) = reload(root);
    Ok(UdevChanged {
        path: path.display().to_string(),
        action: "written".into(),
        udevadm,
        reload_error,
        warnings: group_warnings(root),
    })
}

/// `udev remove`.
///
/// # Errors
///
/// [`UdevError::NotOurs`], [`UdevError::NeedsRoot`].
pub fn remove(root: &Path) -> Result<UdevChanged, UdevError> {
    let path = rules_path(root);
    match std::fs::read_to_string(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(UdevChanged {
                path: path.display().to_string(),
                action: "absent".into(),
                udevadm: Vec::new(),
                reload_error: None,
                warnings: Vec::new(),
            });
        }
        Err(e) => return Err(io(&path, "remove")(e)),
        Ok(text) if !is_ours(&text) => return Err(UdevError::NotOurs(path)),
        Ok(_) => {}
    }
    std::fs::remove_file(&path).map_err(io(&path, "remove"))?;
    let (udevadm, reload_error) = reload(root);
    Ok(UdevChanged {
        path: path.display().to_string(),
        action: "removed".into(),
        udevadm,
        reload_error,
        warnings: Vec::new(),
    })
}
