//! The editing commands: `box.set`, `candy.set`, `box.add-candy`, `box.rm-candy` and
//! `candy.add-{rpm,deb,pac,aur}`.
//!
//! Each one is a lossless edit of one file (see [`super::yamlfile`]): only the edited node changes.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use yaml_edit::{Document, Sequence, YamlNode};

use super::beneath::{Missing, Refusal};
use super::error::{ProjectError, Result};
use super::files::refused;
use super::keypath::KeyPath;
use super::model::{PROJECT_FILE, Project};
use super::names::{check_name, check_package};
use super::report::Edited;
use super::yamlfile::{self, describe, string_items};

/// Most packages one `add_packages` call takes. The lossless editor appends items one at a
/// time, so a call grows slower with the square of its size (2,000 took over a minute): a bound
/// keeps one call from holding the candy's edit lock for long.
pub const MAX_PACKAGES_PER_CALL: usize = 256;

/// The package list of a candy that an `add-*` command appends to. The section is always an
/// explicit argument (never derived from the process's argv: a defect of the reference tool wrote
/// every `add-*` over MCP into the rpm list).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PackageSection {
    /// `add-rpm`: `distro.fedora.package`.
    Rpm,
    /// `add-deb`: `distro."debian,ubuntu".package`.
    Deb,
    /// `add-pac`: `distro.arch.package`.
    Pac,
    /// `add-aur`: `distro.arch.aur.package`.
    Aur,
}

impl PackageSection {
    /// Every section.
    pub const ALL: [PackageSection; 4] =
        [PackageSection::Rpm, PackageSection::Deb, PackageSection::Pac, PackageSection::Aur];

    /// The keys under `<candy>.candy` that lead to the list.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            PackageSection::Rpm => &["distro", "fedora", "package"],
            PackageSection::Deb => &["distro", "debian,ubuntu", "package"],
            PackageSection::Pac => &["distro", "arch", "package"],
            PackageSection::Aur => &["distro", "arch", "aur", "package"],
        }
    }

    /// The full path of the list in candy `candy`'s file.
    pub fn path(self, candy: &str) -> KeyPath {
        KeyPath::from_keys([candy, "candy"].into_iter().chain(self.keys().iter().copied()))
    }

    /// The command-name spelling: `rpm`, `deb`, `pac` or `aur`.
    pub fn name(self) -> &'static str {
        match self {
            PackageSection::Rpm => "rpm",
            PackageSection::Deb => "deb",
            PackageSection::Pac => "pac",
            PackageSection::Aur => "aur",
        }
    }
}

impl fmt::Display for PackageSection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Project {
    /// `box.set`: sets `path` (charly's dot path) in `charly.yml` to `value`, parsed as YAML.
    /// Missing maps on the way are created; a non-map in the way is an error naming the segment.
    pub fn set(&self, path: &str, value: &str) -> Result<Edited> {
        self.set_in(Path::new(PROJECT_FILE), path, value, |_, _| Ok(()))
    }

    /// `candy.set`: like [`set`](Project::set), in `candy/<candy>/charly.yml`. The path starts at
    /// the top of that file, at one of the candy's own nodes: the candy node
    /// (`hello-svc.candy.description`), another node already in the file (`hello-svc-port.port`),
    /// or a new node named `<candy>-<name>`. Any other first key is refused
    /// ([`ProjectError::OutsideCandy`]): a node there would belong to another candy or a box.
    pub fn candy_set(&self, candy: &str, path: &str, value: &str) -> Result<Edited> {
        check_name(candy, "candy")?;
        self.set_in(&Project::candy_file(candy), path, value, |doc, path| {
            let first = path.first_key();
            let nodes: Vec<String> = doc
                .as_mapping()
                .map(|m| m.keys().filter_map(|k| k.as_scalar().map(|s| s.as_string())).collect())
                .unwrap_or_default();
            let own = first == candy
                || first.strip_prefix(candy).is_some_and(|rest| rest.len() > 1 && rest.starts_with('-'))
                || nodes.iter().any(|n| n == first);
            if own {
                return Ok(());
            }
            Err(ProjectError::OutsideCandy { candy: candy.to_owned(), path: path.to_string(), nodes })
        })
    }

    /// Sets `path` in `file` after `guard` accepted it on the parsed file.
    fn set_in(
        &self,
        file: &Path,
        path: &str,
        value: &str,
        guard: impl FnOnce(&Document, &KeyPath) -> Result<()>,
    ) -> Result<Edited> {
        let path = KeyPath::parse(path)?;
        let value = super::given::parse_given(value)?;
        let (_, outcome) = yamlfile::edit_file(
            self,
            file,
            |doc| {
                guard(doc, &path)?;
                yamlfile::set_path(doc, file, &path, &value)
            },
            |doc| yamlfile::verify_equals(doc, file, &path, &value),
        )?;
        Ok(outcome.report(
            format!("set {path} in {}", file.display()),
            format!("{path} in {} already had that value", file.display()),
        ))
    }

    /// `box.add-candy`: appends `candy` to box `box_name`'s `candy:` list (idempotent; a missing or
    /// empty list becomes a list). The candy must exist.
    pub fn add_candy(&self, box_name: &str, candy: &str) -> Result<Edited> {
        check_name(candy, "candy")?;
        self.require_candy(candy)?;
        let path = KeyPath::from_keys([box_name, "box", "candy"]);
        let file = Path::new(PROJECT_FILE);
        let item = [candy.to_owned()];
        let (_, outcome) = yamlfile::edit_file(
            self,
            file,
            |doc| {
                require_box(doc, box_name)?;
                append_unique(doc, file, &path, &item)
            },
            |doc| verify_contains(doc, file, &path, &item, true),
        )?;
        Ok(outcome.report(
            format!("added candy {candy} to box {box_name} ({PROJECT_FILE})"),
            format!("box {box_name} already has candy {candy} ({PROJECT_FILE})"),
        ))
    }

    /// `box.rm-candy`: removes `candy` from box `box_name`'s `candy:` list (idempotent).
    pub fn rm_candy(&self, box_name: &str, candy: &str) -> Result<Edited> {
        let path = KeyPath::from_keys([box_name, "box", "candy"]);
        let file = Path::new(PROJECT_FILE);
        let item = [candy.to_owned()];
        let (_, outcome) = yamlfile::edit_file(
            self,
            file,
            |doc| {
                require_box(doc, box_name)?;
                remove_all(doc, file, &path, candy)
            },
            |doc| verify_contains(doc, file, &path, &item, false),
        )?;
        Ok(outcome.report(
            format!("removed candy {candy} from box {box_name} ({PROJECT_FILE})"),
            format!("box {box_name} has no candy {candy}; nothing to remove"),
        ))
    }

    /// `candy.add-rpm`/`add-deb`/`add-pac`/`add-aur`: appends `packages` to the candy's list for
    /// `section` (idempotent and deduplicated; a missing or empty list becomes a list).
    pub fn add_packages(&self, candy: &str, section: PackageSection, packages: &[String]) -> Result<Edited> {
        check_name(candy, "candy")?;
        if packages.len() > MAX_PACKAGES_PER_CALL {
            return Err(ProjectError::TooManyPackages { given: packages.len(), max: MAX_PACKAGES_PER_CALL });
        }
        for package in packages {
            check_package(package)?;
        }
        let file = Project::candy_file(candy);
        self.require_candy(candy)?;
        let path = section.path(candy);
        let (added, outcome) = yamlfile::edit_file(
            self,
            &file,
            |doc| append_unique(doc, &file, &path, packages),
            |doc| verify_contains(doc, &file, &path, packages, true),
        )?;
        let summary = if added.is_empty() {
            format!("{path} in {} already lists every package", file.display())
        } else {
            format!("added {} to {path} in {}", added.join(", "), file.display())
        };
        Ok(Edited { file: outcome.file, changed: outcome.changed, summary })
    }

    /// Fails unless candy `name`'s file is there: [`ProjectError::NoSuchCandy`] when it is
    /// missing, the path's refusal when it leads outside the project root (a symlink), so the
    /// message says which.
    fn require_candy(&self, name: &str) -> Result<()> {
        let file = Project::candy_file(name);
        match self.beneath()?.locate(&file, Missing::Fail) {
            Ok(entry) if entry.kind == Some(rustix::fs::FileType::RegularFile) => Ok(()),
            Err(refusal @ (Refusal::Outside | Refusal::Nowhere | Refusal::Loop)) => {
                Err(refused(&file, "read", refusal))
            }
            _ => Err(ProjectError::NoSuchCandy { name: name.to_owned(), known: self.candy_dirs()? }),
        }
    }

    /// Names of the directories under `candy/` that hold a `charly.yml`.
    pub(crate) fn candy_dirs(&self) -> Result<Vec<String>> {
        Ok(self
            .yaml_files()?
            .iter()
            .filter_map(|f| {
                f.strip_prefix("candy").ok()?.iter().next().map(|n| n.to_string_lossy().into_owned())
            })
            .collect())
    }
}

/// Fails unless `doc` has a box node `box_name`.
fn require_box(doc: &Document, box_name: &str) -> Result<()> {
    let is_box =
        doc.as_mapping().and_then(|m| m.get_mapping(box_name)).is_some_and(|n| n.contains_key("box"));
    if is_box {
        return Ok(());
    }
    let known = doc
        .as_mapping()
        .map(|m| {
            m.iter()
                .filter(|(_, v)| v.as_mapping().is_some_and(|n| n.contains_key("box")))
                .filter_map(|(k, _)| k.as_scalar().map(|s| s.as_string()))
                .collect()
        })
        .unwrap_or_default();
    Err(ProjectError::NoSuchBox { name: box_name.to_owned(), known })
}

fn empty_list() -> YamlNode {
    let doc = Document::from_str("[]").expect("`[]` parses");
    YamlNode::Sequence(doc.as_sequence().expect("`[]` is a list"))
}

/// The list at `path` for an edit of its items: `None` when missing or empty. Refused when the
/// path goes through an alias or a merge key ([`yamlfile::walk`]), when the list itself is an
/// alias (its items are the anchored list's), or when it is not a list.
fn own_list(doc: &Document, file: &Path, path: &KeyPath) -> Result<Option<Sequence>> {
    match yamlfile::walk(doc, file, path)? {
        Some(YamlNode::Sequence(seq)) => Ok(Some(seq)),
        Some(YamlNode::Scalar(s)) if s.is_null() => Ok(None),
        None => Ok(None),
        Some(YamlNode::Alias(alias)) => Err(yamlfile::through_alias(file, path, path.to_string(), &alias)),
        Some(other) => Err(ProjectError::NotAList {
            file: file.to_owned(),
            path: path.to_string(),
            found: describe(&other),
        }),
    }
}

/// Appends the items of `items` that `path`'s list lacks, creating the list (and maps on the way)
/// when missing or empty. Returns the items added.
fn append_unique(doc: &Document, file: &Path, path: &KeyPath, items: &[String]) -> Result<Vec<String>> {
    let list = own_list(doc, file, path)?;
    let mut existing =
        list.as_ref().map(|seq| string_items(&YamlNode::Sequence(seq.clone()))).unwrap_or_default();
    let mut added = Vec::new();
    for item in items {
        if !existing.contains(item) {
            existing.push(item.clone());
            added.push(item.clone());
        }
    }
    if added.is_empty() {
        return Ok(added);
    }
    let seq = match list {
        Some(seq) => seq,
        None => {
            yamlfile::set_path(doc, file, path, empty_list())?;
            let node = yamlfile::get(doc, path);
            node.and_then(|n| n.as_sequence().cloned()).ok_or_else(|| ProjectError::EditNotVerified {
                file: file.to_owned(),
                path: path.to_string(),
            })?
        }
    };
    for item in &added {
        seq.push(item.as_str());
    }
    Ok(added)
}

/// Removes every item equal to `item` from `path`'s list; a missing or empty list has nothing.
fn remove_all(doc: &Document, file: &Path, path: &KeyPath, item: &str) -> Result<()> {
    let Some(seq) = own_list(doc, file, path)? else { return Ok(()) };
    let items: Vec<Option<String>> = seq.values().map(|v| v.as_scalar().map(|s| s.as_string())).collect();
    for index in (0..items.len()).rev().filter(|&i| items[i].as_deref() == Some(item)) {
        seq.remove(index);
    }
    Ok(())
}

/// Checks on the re-parsed file that `path`'s list has (or, with `present == false`, lacks) every
/// item of `items`.
fn verify_contains(
    doc: &Document,
    file: &Path,
    path: &KeyPath,
    items: &[String],
    present: bool,
) -> Result<()> {
    let list = yamlfile::get(doc, path).map(|n| string_items(&n)).unwrap_or_default();
    if items.iter().all(|i| list.contains(i) == present) {
        Ok(())
    } else {
        Err(ProjectError::EditNotVerified { file: file.to_owned(), path: path.to_string() })
    }
}
