//! `box.inspect`, `box.generate` and `box.build`: from a box node to a Containerfile and an image.
//!
//! A box resolves to its base image and, per candy, the packages for each distribution, the ports
//! and the `mcp_provide` entries found in that candy's file. The package manager is picked from the
//! base image's distribution (or the box's `distro:`), and only that distribution's packages go into
//! the Containerfile.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::beneath::{Beneath, Missing};
use super::candy_files::{self, CandyFile};
use super::edit::PackageSection;
use super::error::{ProjectError, Result};
use super::files::{Put, put};
use super::model::{Kind, Node, Project};
use super::problem::Problem;
use super::report::{Built, CandyInspection, Generated, Inspection};
use super::runtime::Runtime;
use super::{containerfile, tools};

/// The distribution families charly installs packages on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Fedora, CentOS, RHEL, UBI, Rocky, Alma: `dnf`, the candy's `distro.fedora.package`.
    Fedora,
    /// Debian and Ubuntu: `apt-get`, `distro."debian,ubuntu".package`.
    Debian,
    /// Arch Linux: `pacman` (`distro.arch.package`) and AUR builds (`distro.arch.aur.package`).
    Arch,
}

impl Family {
    /// The family of a base image reference, judged by its repository path
    /// (`quay.io/fedora/fedora:43` → Fedora), or of a box's explicit `distro:`.
    pub fn detect(base: &str, distro: Option<&str>) -> Option<Family> {
        if let Some(distro) = distro {
            return Family::from_name(distro);
        }
        let without_digest = base.split('@').next().unwrap_or(base);
        let repository = match without_digest.rsplit_once(':') {
            Some((repo, tag)) if !tag.contains('/') => repo,
            _ => without_digest,
        };
        repository.rsplit('/').find_map(Family::from_name)
    }

    fn from_name(name: &str) -> Option<Family> {
        let name = name.to_ascii_lowercase();
        let starts = |prefixes: &[&str]| prefixes.iter().any(|p| name.starts_with(p));
        if starts(&["fedora", "centos", "rhel", "ubi", "rockylinux", "almalinux", "amazonlinux"]) {
            Some(Family::Fedora)
        } else if starts(&["debian", "ubuntu"]) {
            Some(Family::Debian)
        } else if starts(&["archlinux", "arch"]) {
            Some(Family::Arch)
        } else {
            None
        }
    }

    /// The candy sections installed for this family.
    pub fn sections(self) -> &'static [PackageSection] {
        match self {
            Family::Fedora => &[PackageSection::Rpm],
            Family::Debian => &[PackageSection::Deb],
            Family::Arch => &[PackageSection::Pac, PackageSection::Aur],
        }
    }

    /// A short name: `fedora`, `debian` or `arch`.
    pub fn name(self) -> &'static str {
        match self {
            Family::Fedora => "fedora",
            Family::Debian => "debian",
            Family::Arch => "arch",
        }
    }
}

/// A box with everything its candies bring, as `generate` uses it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedBox {
    /// The box name.
    pub name: String,
    /// Its base image.
    pub base: String,
    /// The distribution family of the base image, when known.
    pub family: Option<Family>,
    /// Its candies, in the box's order.
    pub candies: Vec<ResolvedCandy>,
    /// The image name `build` tags.
    pub image: String,
    /// The `ai.opencharly.check` label (the candies' and charly.yml's checks, as JSON), when
    /// there are any.
    pub check_label: Option<String>,
    /// The box node's own `env:` and `security:` (charly.yml), applied over its candies'
    /// (env by key, security as a later candy's would be).
    pub own: Runtime,
}

/// The box node's own deploy-time keys (`env:`, `security:`), parsed, and their problems
/// (worded with the key path, `env[0]`).
pub(crate) fn box_runtime(spec: &Value) -> (Runtime, Vec<String>) {
    let mut own = Runtime::default();
    let mut problems = Vec::new();
    for key in super::runtime::BOX_KEYS {
        if let Some(value) = spec.get(key).filter(|v| !v.is_null()) {
            let mut found = Vec::new();
            super::runtime::parse(key, value, "", &mut own, &mut found);
            problems.extend(found);
        }
    }
    (own, problems)
}

/// One candy of a [`ResolvedBox`].
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedCandy {
    /// The candy name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its packages, per section, in file order.
    pub packages: Vec<(PackageSection, Vec<String>)>,
    /// The ports of the `port:` nodes in its file.
    pub ports: Vec<u16>,
    /// The entries of the `mcp_provide:` nodes in its file.
    pub mcp_provide: Vec<Value>,
    /// The names of the check nodes in its file.
    pub checks: Vec<String>,
    /// The files its `file:` nodes copy into the image, in file order.
    pub files: Vec<CandyFile>,
    /// What its deploy-time nodes declare (services, volumes, env, ...).
    pub runtime: Runtime,
    /// What is wrong with those nodes (`box.generate` refuses the box while there is any).
    pub problems: Vec<Problem>,
}

impl ResolvedBox {
    /// The packages of `section` over all candies, first appearance first, without duplicates.
    pub fn packages(&self, section: PackageSection) -> Vec<String> {
        let mut all: Vec<String> = Vec::new();
        for candy in &self.candies {
            for package in candy.packages.iter().filter(|(s, _)| *s == section).flat_map(|(_, p)| p) {
                if !all.contains(package) {
                    all.push(package.clone());
                }
            }
        }
        all
    }

    /// Every port of every candy, sorted and without duplicates.
    pub fn ports(&self) -> Vec<u16> {
        let mut ports: Vec<u16> = self.candies.iter().flat_map(|c| c.ports.iter().copied()).collect();
        ports.sort_unstable();
        ports.dedup();
        ports
    }

    /// Every `mcp_provide` entry of every candy, in order.
    pub fn mcp_provide(&self) -> Vec<Value> {
        self.candies.iter().flat_map(|c| c.mcp_provide.iter().cloned()).collect()
    }

    /// Every candy's `file:` entries, in the box's order (a later candy's copy of the same
    /// destination is written over the earlier one, as `COPY` does).
    pub fn files(&self) -> Vec<CandyFile> {
        self.candies.iter().flat_map(|c| c.files.iter().cloned()).collect()
    }

    /// The deploy-time declarations of every candy, merged in the box's order.
    pub fn runtime(&self) -> Runtime {
        let mut all = Runtime::default();
        for candy in &self.candies {
            all.extend(candy.runtime.clone());
        }
        all.extend(self.own.clone());
        all
    }

    /// Every problem of the box's deploy-time declarations: each candy's, then those of the
    /// candies together (on the box node in charly.yml).
    pub fn problems(&self) -> Vec<Problem> {
        let mut out: Vec<Problem> = self.candies.iter().flat_map(|c| c.problems.iter().cloned()).collect();
        let node = Some(self.name.clone());
        out.extend(self.runtime().conflicts().into_iter().map(|message| Problem {
            file: PathBuf::from(super::PROJECT_FILE),
            node: node.clone(),
            message,
        }));
        out
    }

    /// Where `generate` writes supervisord's configuration, relative to the project root.
    pub fn supervisord_conf_path(&self) -> PathBuf {
        Path::new(".build").join(&self.name).join("supervisord.conf")
    }

    /// Where `generate` writes the Containerfile, relative to the project root.
    pub fn containerfile_path(&self) -> PathBuf {
        Path::new(".build").join(&self.name).join("Containerfile")
    }
}

impl Project {
    /// Resolves box `name` from the project's files.
    pub fn resolve_box(&self, name: &str) -> Result<ResolvedBox> {
        let nodes = self.load_strict()?;
        self.resolve_in(&nodes, &self.beneath()?, name)
    }

    /// Resolves box `name` from `nodes` (read from this project).
    pub(crate) fn resolve_in(&self, nodes: &[Node], beneath: &Beneath, name: &str) -> Result<ResolvedBox> {
        let of_kind = |kind| nodes.iter().filter(move |n: &&Node| n.kind == Some(kind));
        let Some(node) = of_kind(Kind::Box).find(|n| n.name == name) else {
            let known = of_kind(Kind::Box).map(|n| n.name.clone()).collect();
            return Err(ProjectError::NoSuchBox { name: name.to_owned(), known });
        };
        // A hand-written box name podman would refuse as an image name (capitals) is refused
        // before anything is built, configured or started.
        super::names::check_name(name, "box")?;
        let spec = node.spec();
        let base = spec.get("base").and_then(Value::as_str).unwrap_or_default().to_owned();
        let family = Family::detect(&base, spec.get("distro").and_then(Value::as_str));
        let mut candies = Vec::new();
        for candy in
            spec.get("candy").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
        {
            let Some(candy_node) = of_kind(Kind::Candy).find(|n| n.name == candy) else {
                let known = of_kind(Kind::Candy).map(|n| n.name.clone()).collect();
                return Err(ProjectError::NoSuchCandy { name: candy.to_owned(), known });
            };
            candies.push(resolve_candy(candy_node, nodes, beneath));
        }
        let registry = nodes
            .iter()
            .find(|n| n.kind == Some(Kind::Project))
            .and_then(|n| n.spec().pointer("/defaults/registry").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_else(|| "localhost".to_owned());
        let image = format!("{}/{name}:latest", registry.trim_end_matches('/'));
        let check_label = super::checks::label(nodes, &candies);
        Ok(ResolvedBox {
            name: name.to_owned(),
            base,
            family,
            candies,
            image,
            check_label,
            own: box_runtime(spec).0,
        })
    }

    /// `box.inspect`: the resolved configuration of box `name`. A file that cannot be read is
    /// left out with a warning; when the box, or one of its candies, is not found and a file was
    /// left out, the error is the unreadable files ([`ProjectError::Invalid`]): the node may be
    /// in one of them.
    pub fn inspect(&self, name: &str) -> Result<Inspection> {
        let (nodes, unreadable) = self.load()?;
        let b = match self.resolve_in(&nodes, &self.beneath()?, name) {
            Ok(b) => b,
            Err(ProjectError::NoSuchBox { .. } | ProjectError::NoSuchCandy { .. })
                if !unreadable.is_empty() =>
            {
                return Err(ProjectError::Invalid { problems: unreadable });
            }
            Err(e) => return Err(e),
        };
        // `box.validate` reports an entry that is not a map; inspect shows the maps.
        let object = |value: Value| match value {
            Value::Object(map) => Some(map),
            _ => None,
        };
        let candies = b
            .candies
            .iter()
            .map(|c| CandyInspection {
                name: c.name.clone(),
                description: c.description.clone(),
                packages: c.packages.iter().map(|(s, p)| (s.name().to_owned(), json!(p))).collect(),
                ports: c.ports.clone(),
                mcp_provide: c.mcp_provide.iter().cloned().filter_map(object).collect(),
                checks: c.checks.clone(),
            })
            .collect();
        let packages = b
            .family
            .map(|f| f.sections().iter().map(|s| (s.name().to_owned(), json!(b.packages(*s)))).collect())
            .unwrap_or_default();
        Ok(Inspection {
            name: b.name.clone(),
            base: b.base.clone(),
            distro: b.family.map(|f| f.name().to_owned()),
            candies,
            packages,
            ports: b.ports(),
            mcp_provide: b.mcp_provide().into_iter().filter_map(object).collect(),
            containerfile: b.containerfile_path(),
            image: b.image.clone(),
            warnings: super::model::left_out(&unreadable),
        })
    }

    /// `box.generate`: writes `.build/<name>/Containerfile` (and, for a box with services,
    /// `.build/<name>/supervisord.conf`, which the Containerfile copies in). A box whose
    /// candies' deploy-time nodes have problems is refused before anything is written.
    pub fn generate(&self, name: &str) -> Result<Generated> {
        let b = self.resolve_box(name)?;
        let problems = b.problems();
        if !problems.is_empty() {
            return Err(ProjectError::Invalid { problems });
        }
        let text = containerfile::render(&b)?;
        let beneath = self.beneath()?;
        let runtime = b.runtime();
        if runtime.init().is_some() {
            let conf = runtime.supervisord_conf(&b.name);
            put(&beneath, &b.supervisord_conf_path(), conf.as_bytes(), Put::Replace, self.cancel())?;
        }
        let relative = b.containerfile_path();
        put(&beneath, &relative, text.as_bytes(), Put::Replace, self.cancel())?;
        Ok(Generated { box_name: name.to_owned(), containerfile: relative })
    }

    /// `box.build`: generates the Containerfile and runs `podman build` on it.
    pub fn build(&self, name: &str) -> Result<Built> {
        self.build_with(OsStr::new("podman"), name)
    }

    /// [`build`](Project::build) with another `podman` program (a path, or a name looked up on PATH).
    pub fn build_with(&self, podman: &OsStr, name: &str) -> Result<Built> {
        self.build_with_pull(podman, name, false)
    }

    /// [`build_with`](Project::build_with); `pull` asks podman for a newer base image first
    /// (`--pull=newer`), as `update --pull` does.
    pub fn build_with_pull(&self, podman: &OsStr, name: &str, pull: bool) -> Result<Built> {
        let b = self.resolve_box(name)?;
        let generated = self.generate(name)?;
        let containerfile = self.root().join(&generated.containerfile);
        let mut args = vec![
            OsStr::new("build"),
            OsStr::new("--file"),
            containerfile.as_os_str(),
            OsStr::new("--tag"),
            OsStr::new(&b.image),
        ];
        if pull {
            args.push(OsStr::new("--pull=newer"));
        }
        args.push(self.root().as_os_str());
        let mut log = Vec::new();
        // podman's layer cache lookup walks every image; one removed meanwhile by another
        // podman (a prune, an rmi) fails the build before its first step with "layer not
        // known" or "image not known" (seen with parallel builds). Such a build is run again,
        // up to three times in all; any other failure is the build's own.
        for attempt in 1..=3 {
            match tools::run(podman, &args, "build container images", &mut log) {
                Err(ProjectError::CommandFailed { stderr, .. })
                    if attempt < 3 && storage_race(&stderr) && !self.cancel().is_cancelled() =>
                {
                    log.clear();
                }
                done => {
                    done?;
                    break;
                }
            }
        }
        Ok(Built {
            box_name: name.to_owned(),
            containerfile: generated.containerfile,
            image: b.image,
            log: String::from_utf8_lossy(&log).into_owned(),
            pruned_images: Vec::new(),
        })
    }
}

/// Whether a failed `podman build`'s `stderr` is podman's race with another podman removing an
/// image while the build looks for its cache (the build did nothing yet).
fn storage_race(stderr: &str) -> bool {
    stderr.contains("checking if cached image exists")
        && (stderr.contains("not known") || stderr.contains("no such"))
}

/// The `data:` sources of `rt` that are not a file or directory beneath the root
/// (`candy/<candy>/<source>`), worded as problems.
pub(crate) fn missing_sources(beneath: &Beneath, rt: &Runtime) -> Vec<String> {
    rt.data
        .iter()
        .filter(|d| {
            let path = Path::new("candy").join(&d.candy).join(&d.source);
            !beneath.locate(&path, Missing::Fail).is_ok_and(|e| e.kind.is_some())
        })
        .map(|d| {
            format!(
                "`data` source {:?} (for volume `{}`) is not in the candy's directory (candy/{}/{}); create it, or name a file or directory there",
                d.source, d.volume, d.candy, d.source
            )
        })
        .collect()
}

pub(crate) fn resolve_candy(node: &Node, nodes: &[Node], beneath: &Beneath) -> ResolvedCandy {
    let spec = node.spec();
    let packages = PackageSection::ALL
        .iter()
        .map(|s| {
            let pointer: String =
                s.keys().iter().map(|k| format!("/{}", k.replace('~', "~0").replace('/', "~1"))).collect();
            let list = spec.pointer(&pointer).and_then(Value::as_array).into_iter().flatten();
            (*s, list.filter_map(Value::as_str).map(str::to_owned).collect())
        })
        .collect();
    let siblings = || nodes.iter().filter(|n| n.file == node.file);
    let ports = siblings()
        .filter(|n| n.kind == Some(Kind::Port))
        .flat_map(|n| match n.spec() {
            Value::Array(items) => items.clone(),
            other => vec![other.clone()],
        })
        .filter_map(|p| p.as_u64().and_then(|p| u16::try_from(p).ok()))
        .collect();
    let mcp_provide = siblings()
        .filter(|n| n.kind == Some(Kind::McpProvide))
        .flat_map(|n| n.spec().as_array().cloned().unwrap_or_default())
        .collect();
    let checks = siblings().filter(|n| n.kind == Some(Kind::Check)).map(|n| n.name.clone()).collect();
    let mut runtime = Runtime::default();
    let mut problems = Vec::new();
    let mut files = Vec::new();
    for n in siblings().filter(|n| n.kind == Some(Kind::File)) {
        let mut messages = Vec::new();
        let declared = candy_files::parse(n.spec(), &node.name, &mut messages);
        messages.extend(candy_files::missing_sources(beneath, &declared));
        files.extend(declared);
        problems.extend(messages.into_iter().map(|m| Problem::node(n, m)));
    }
    for n in siblings().filter(|n| n.kind.is_some_and(|k| Kind::RUNTIME.contains(&k))) {
        let mut messages = Vec::new();
        let mut declared = Runtime::default();
        let kind = n.kind.expect("filtered").key();
        super::runtime::parse(kind, n.spec(), &node.name, &mut declared, &mut messages);
        if kind == "data" {
            // Staging directories are numbered over the candy's data entries.
            for d in &mut declared.data {
                let index = runtime.data.len();
                d.staging = format!("{}/{}/{index}", super::runtime::DATA_DIR, node.name);
                runtime.data.push(d.clone());
            }
            messages.extend(missing_sources(beneath, &declared));
            declared.data.clear();
        }
        runtime.extend(declared);
        problems.extend(messages.into_iter().map(|m| Problem::node(n, m)));
    }
    ResolvedCandy {
        name: node.name.clone(),
        description: spec.get("description").and_then(Value::as_str).unwrap_or_default().to_owned(),
        packages,
        ports,
        mcp_provide,
        checks,
        files,
        runtime,
        problems,
    }
}

#[cfg(test)]
mod tests {
    use super::storage_race;

    #[test]
    fn podmans_cache_lookup_race_is_told_from_a_build_failure() {
        // As podman 4.3 printed it in a full test run (a prune beside the build).
        let race = "Error: checking if cached image exists from a previous build: getting top layer info: layer not known";
        assert!(storage_race(race));
        assert!(storage_race(
            "Error: checking if cached image exists from a previous build: image not known"
        ));
        assert!(!storage_race("Error: building at STEP \"RUN false\": while running runtime: exit status 1"));
        assert!(!storage_race("Error: creating build container: short-name resolution: layer not known"));
    }
}
