//! `charly alias ...`: wrapper scripts on the host that run a command inside a box's container
//! (REFERENCE.md §7). A script lives in `--dest` (default `~/.local/bin`), mode 0755, and
//! carries the marker line `# charly-alias`; `remove` and `uninstall` touch marked files only.

mod script;

use std::path::{Path, PathBuf};
use std::process::Command;

use schemars::JsonSchema;
use serde::Serialize;

pub use script::{Alias, MARKER, check_command, check_name, parse, render, sh_quote};

use crate::config::Settings;
use crate::hostfile;
use crate::report::Report;

/// The image label that lists a box's aliases: JSON `[{"name": ..., "command": ...}]`.
pub const ALIAS_LABEL: &str = "ai.opencharly.alias";

/// Why an `alias` command could not do its work.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AliasError {
    /// A bad name or command (the message says which); nothing was written.
    #[error("{0}; nothing was changed")]
    Invalid(String),
    /// The box's image is not in the engine's local storage.
    #[error(
        "image {image} of box {target} is not in {engine}'s local storage: build it (`charly box build {target}`) or pull it first"
    )]
    NoImage {
        /// The box.
        target: String,
        /// The image reference.
        image: String,
        /// The engine.
        engine: String,
    },
    /// The engine could not be run.
    #[error("cannot run {engine} to look up the image: {message}")]
    Engine {
        /// The engine.
        engine: String,
        /// Why.
        message: String,
    },
    /// No alias of that name.
    #[error("no alias {name} in {}", dir.display())]
    NotFound {
        /// The name.
        name: String,
        /// The directory.
        dir: PathBuf,
    },
    /// The file exists and is not charly's.
    #[error("{} is not a charly alias (its second line is not `{MARKER}`): left as it is; nothing was changed", .0.display())]
    NotOurs(PathBuf),
    /// A symlink to nothing is where the alias would go.
    #[error("{} is a symlink to a missing file: left as it is (remove it to let charly write the alias); \
             nothing was changed", .0.display())]
    Dangling(PathBuf),
    /// A file could not be read or written.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// One alias, as reported.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AliasEntry {
    /// The script's name.
    pub name: String,
    /// The box.
    #[serde(rename = "box")]
    pub r#box: String,
    /// The command.
    pub command: String,
    /// The script's path.
    pub path: String,
}

impl From<(&Alias, &Path)> for AliasEntry {
    fn from((a, dir): (&Alias, &Path)) -> AliasEntry {
        AliasEntry {
            name: a.name.clone(),
            r#box: a.r#box.clone(),
            command: a.command.clone(),
            path: dir.join(&a.name).display().to_string(),
        }
    }
}

/// `alias add|install|remove|uninstall`: what changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AliasChanged {
    /// `created`, `replaced`, `installed`, `removed`.
    pub action: String,
    /// The box.
    #[serde(rename = "box")]
    pub r#box: String,
    /// The aliases written or removed.
    pub aliases: Vec<AliasEntry>,
    /// What the user should know: an alias named like a command elsewhere on PATH.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl std::fmt::Display for AliasChanged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.action.as_str() {
            "created" => self.aliases.iter().try_for_each(|a| {
                writeln!(f, "Created alias {} -> {} (box: {})", a.name, a.command, a.r#box)
            }),
            "replaced" => self.aliases.iter().try_for_each(|a| {
                writeln!(f, "Replaced alias {} -> {} (box: {})", a.name, a.command, a.r#box)
            }),
            "installed" if self.aliases.is_empty() => {
                writeln!(f, "No aliases defined for box {}", self.r#box)
            }
            "installed" => {
                self.aliases.iter().try_for_each(|a| writeln!(f, "Installed {} -> {}", a.name, a.command))?;
                writeln!(f, "Installed {} alias(es) for {}", self.aliases.len(), self.r#box)
            }
            _ => {
                self.aliases.iter().try_for_each(|a| writeln!(f, "Removed alias {}", a.name))?;
                if !self.r#box.is_empty() {
                    writeln!(
                        f,
                        "Removed {} alias(es){}",
                        self.aliases.len(),
                        if self.r#box.is_empty() { String::new() } else { format!(" for {}", self.r#box) }
                    )?;
                }
                Ok(())
            }
        }
    }
}

impl Report for AliasChanged {
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// A warning when `name` is also a command in another directory of PATH than `dest`: where
/// `dest` comes first, the alias runs in place of that command (`alias add sudo box` made
/// `sudo` run in the box's container without a word: trial 29).
fn shadows(name: &str, dest: &Path, r#box: &str) -> Option<String> {
    let dest = std::fs::canonicalize(dest).unwrap_or_else(|_| dest.to_owned());
    let path = std::env::var_os("PATH")?;
    let other = std::env::split_paths(&path)
        .filter(|dir| std::fs::canonicalize(dir).map_or(true, |d| d != dest))
        .map(|dir| dir.join(name))
        .find(|file| {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })?;
    Some(format!(
        "alias {name} has the name of {}: where {} comes first in PATH, `{name}` runs in box {}'s container instead",
        other.display(),
        dest.display(),
        r#box
    ))
}

/// `alias list`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AliasList {
    /// The directory scanned.
    pub dest: String,
    /// The aliases, by name.
    pub aliases: Vec<AliasEntry>,
}

impl std::fmt::Display for AliasList {
    /// `name<TAB>box<TAB>command` per alias.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.aliases.iter().try_for_each(|a| writeln!(f, "{}\t{}\t{}", a.name, a.r#box, a.command))
    }
}

impl Report for AliasList {}

/// `~/.local/bin`.
pub fn default_dest() -> PathBuf {
    hostfile::home().join(".local").join("bin")
}

/// The image of `box`: the project's box image when the project has the box, else the name as
/// given (a full reference).
fn image_of(project_dir: &Path, r#box: &str) -> String {
    crate::project::Project::open(project_dir)
        .ok()
        .and_then(|p| p.resolve_box(r#box).ok())
        .map(|b| b.image)
        .unwrap_or_else(|| r#box.to_owned())
}

fn engine(project_dir: &Path) -> String {
    let configured =
        Settings::load(project_dir).map(|s| s.value("engine.run")).unwrap_or_else(|_| "auto".into());
    match configured.as_str() {
        "docker" => "docker".into(),
        "podman" => "podman".into(),
        _ if hostfile::which("podman").is_none() && hostfile::which("docker").is_some() => "docker".into(),
        _ => "podman".into(),
    }
}

fn require_image(project_dir: &Path, r#box: &str) -> Result<(String, String), AliasError> {
    let (engine, image) = (engine(project_dir), image_of(project_dir, r#box));
    let args: Vec<&str> =
        if engine == "docker" { vec!["image", "inspect", &image] } else { vec!["image", "exists", &image] };
    let out = Command::new(&engine)
        .args(&args)
        .output()
        .map_err(|e| AliasError::Engine { engine: engine.clone(), message: e.to_string() })?;
    if out.status.success() {
        Ok((engine, image))
    } else {
        Err(AliasError::NoImage { target: r#box.into(), image, engine })
    }
}

fn check_box(r#box: &str) -> Result<(), AliasError> {
    let ok = !r#box.is_empty() && !r#box.starts_with('-') && !r#box.contains(['\n', '\r', '\0', '\'', ' ']);
    if ok { Ok(()) } else { Err(AliasError::Invalid(format!("invalid box name {box:?}", box = r#box))) }
}

/// Whether `alias` may be written in `dest`: nothing there yet, or a charly alias (a symlink
/// is followed to a charly alias; a dangling one is refused, not replaced).
fn check_free(dest: &Path, alias: &Alias) -> Result<(), AliasError> {
    let path = dest.join(&alias.name);
    let Ok(meta) = std::fs::symlink_metadata(&path) else { return Ok(()) };
    if meta.file_type().is_symlink() && !path.exists() {
        return Err(AliasError::Dangling(path));
    }
    match std::fs::read_to_string(&path) {
        Ok(existing) if parse(&alias.name, &existing).is_some() => Ok(()),
        _ => Err(AliasError::NotOurs(path)),
    }
}

fn write(dest: &Path, alias: &Alias) -> Result<(), AliasError> {
    check_free(dest, alias)?;
    let path = dest.join(&alias.name);
    std::fs::create_dir_all(dest).map_err(|e| hostfile::with_path(e, "create the directory", dest))?;
    hostfile::write_atomic(&path, render(alias).as_bytes(), 0o755)?;
    Ok(())
}

/// `alias add <name> <box> [command]`.
///
/// # Errors
///
/// [`AliasError::Invalid`], [`AliasError::NoImage`], [`AliasError::NotOurs`] (a file of that
/// name that is not an alias), [`AliasError::Io`].
pub fn add(
    name: &str,
    r#box: &str,
    command: Option<&str>,
    dest: &Path,
    project_dir: &Path,
) -> Result<AliasChanged, AliasError> {
    check_name(name).map_err(AliasError::Invalid)?;
    check_box(r#box)?;
    let command = command.unwrap_or(name);
    check_command(command).map_err(AliasError::Invalid)?;
    require_image(project_dir, r#box)?;
    let alias =
        Alias { name: name.into(), r#box: r#box.into(), command: command.into(), project: pin(project_dir) };
    // `write` replaces only a charly alias ([`check_free`]): one there now is replaced, and said so.
    let replaced = std::fs::symlink_metadata(dest.join(name)).is_ok();
    write(dest, &alias)?;
    Ok(AliasChanged {
        action: if replaced { "replaced" } else { "created" }.into(),
        r#box: r#box.into(),
        aliases: vec![(&alias, dest).into()],
        warnings: shadows(name, dest, r#box).into_iter().collect(),
    })
}

/// The project an alias script names with `-C`: `project_dir`, absolute, when it is a project
/// (a `charly.yml` there), so the script runs from any directory (trial 29, M4: run from `/`
/// it failed with "charly.yml is missing"); `None` otherwise.
fn pin(project_dir: &Path) -> Option<String> {
    let dir = std::fs::canonicalize(project_dir).ok()?;
    dir.join("charly.yml").is_file().then(|| dir.display().to_string())
}

#[derive(serde::Deserialize)]
struct LabelAlias {
    name: String,
    #[serde(default)]
    command: Option<String>,
}

/// `alias install <box>`: one script per entry of the image's [`ALIAS_LABEL`]. Every entry is
/// checked before any script is written.
///
/// # Errors
///
/// [`AliasError::NoImage`], [`AliasError::Invalid`] for a label that is not the JSON list or
/// holds a bad name, [`AliasError::NotOurs`], [`AliasError::Io`].
pub fn install(r#box: &str, dest: &Path, project_dir: &Path) -> Result<AliasChanged, AliasError> {
    check_box(r#box)?;
    let (engine, image) = require_image(project_dir, r#box)?;
    let out = Command::new(&engine)
        .args(["image", "inspect", &image])
        .output()
        .map_err(|e| AliasError::Engine { engine: engine.clone(), message: e.to_string() })?;
    let inspect: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let labels = inspect.pointer("/0/Labels").or_else(|| inspect.pointer("/0/Config/Labels"));
    let label = labels.and_then(|l| l.get(ALIAS_LABEL)).and_then(|v| v.as_str()).unwrap_or_default();
    let entries: Vec<LabelAlias> = if label.trim().is_empty() {
        Vec::new()
    } else {
        serde_json::from_str(label).map_err(|e| {
            AliasError::Invalid(format!(
                "the image's {ALIAS_LABEL} label is not a JSON list of {{name, command}}: {e}"
            ))
        })?
    };
    let aliases: Vec<Alias> = entries
        .into_iter()
        .map(|e| Alias {
            command: e.command.unwrap_or_else(|| e.name.clone()),
            name: e.name,
            r#box: r#box.into(),
            project: pin(project_dir),
        })
        .collect();
    for a in &aliases {
        check_name(&a.name).map_err(AliasError::Invalid)?;
        check_command(&a.command).map_err(AliasError::Invalid)?;
    }
    // Every target too, before the first script is written: all or nothing.
    for a in &aliases {
        check_free(dest, a)?;
    }
    for a in &aliases {
        write(dest, a)?;
    }
    Ok(AliasChanged {
        action: "installed".into(),
        r#box: r#box.into(),
        aliases: aliases.iter().map(|a| (a, dest).into()).collect(),
        warnings: aliases.iter().filter_map(|a| shadows(&a.name, dest, r#box)).collect(),
    })
}

fn scan(dest: &Path) -> Result<Vec<Alias>, AliasError> {
    let entries = match std::fs::read_dir(dest) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(hostfile::with_path(e, "read", dest).into()),
    };
    let mut aliases: Vec<Alias> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| e.metadata().is_ok_and(|m| m.len() < 64 * 1024))
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            parse(&name, &std::fs::read_to_string(e.path()).ok()?)
        })
        .collect();
    aliases.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(aliases)
}

/// `alias list`.
///
/// # Errors
///
/// [`AliasError::Io`] when `dest` cannot be read.
pub fn list(dest: &Path) -> Result<AliasList, AliasError> {
    let aliases = scan(dest)?;
    Ok(AliasList {
        dest: dest.display().to_string(),
        aliases: aliases.iter().map(|a| (a, dest).into()).collect(),
    })
}

/// `alias remove <name>`: only a file that carries the marker.
///
/// # Errors
///
/// [`AliasError::Invalid`], [`AliasError::NotFound`], [`AliasError::NotOurs`].
pub fn remove(name: &str, dest: &Path) -> Result<AliasChanged, AliasError> {
    check_name(name).map_err(AliasError::Invalid)?;
    let path = dest.join(name);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(AliasError::NotFound { name: name.into(), dir: dest.to_owned() });
        }
        Err(_) => return Err(AliasError::NotOurs(path)),
    };
    let alias = parse(name, &text).ok_or_else(|| AliasError::NotOurs(path.clone()))?;
    std::fs::remove_file(&path).map_err(|e| hostfile::with_path(e, "remove", &path))?;
    Ok(AliasChanged {
        action: "removed".into(),
        r#box: String::new(),
        aliases: vec![(&alias, dest).into()],
        warnings: Vec::new(),
    })
}

/// `alias uninstall <box>`: every marked script of that box.
///
/// # Errors
///
/// [`AliasError::Io`].
pub fn uninstall(r#box: &str, dest: &Path) -> Result<AliasChanged, AliasError> {
    let mut removed = Vec::new();
    for alias in scan(dest)?.into_iter().filter(|a| a.r#box == r#box) {
        let path = dest.join(&alias.name);
        std::fs::remove_file(&path).map_err(|e| hostfile::with_path(e, "remove", &path))?;
        removed.push((&alias, dest).into());
    }
    Ok(AliasChanged { action: "removed".into(), r#box: r#box.into(), aliases: removed, warnings: Vec::new() })
}
