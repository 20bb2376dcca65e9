//! Skills: the MCP skills extension (`io.modelcontextprotocol/skills`, SEP-2640).
//!
//! A skill is a folder of files with a `SKILL.md` at its root whose YAML frontmatter has at
//! least `name` and `description`. The server lists each skill's manifest (`skills/list`,
//! `skills/get`: the frontmatter as JSON and every file's `{uri, digest, size}`), lists each
//! `SKILL.md` in `resources/list`, serves the files through `resources/read` at
//! `skill://<skill-path>/<file>` and the folders through `resources/directory/read`. A server
//! with skills declares the extension, with `directoryRead: true`, and the `resources`
//! capability.
//!
//! The skill types, digests and entry rules are rmcp's ([`rmcp::model::Skill`],
//! [`rmcp::model::SkillResource::from_bytes`], [`rmcp::model::Skill::validate`]); rmcp's own
//! `SkillCatalog` serves a directory tree, but it sits behind rmcp's `skills-fs` feature
//! (cap-std), and it cannot serve skills a program builds in memory. This module holds the
//! files in memory, from a program or from a folder ([`Skill::from_dir`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    DIRECTORY_MIME_TYPE, ReadResourceResult, ResourceContents, SKILL_MD, SkillFrontmatter, SkillResource,
    SkillResources,
};
use serde_json::Value;

use super::pages::Pages;

/// Most files one skill may have (`SKILL.md` included), the extension's limit.
pub const MAX_SKILL_FILES: usize = 512;

/// Most bytes the files of one skill may sum to, the extension's limit: 16 MiB.
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

const SCHEME: &str = "skill://";
const MARKDOWN: &str = "text/markdown";

/// One skill served by a [`super::Server`] (the skills extension, SEP-2640): a skill path
/// (`pdf-processing`, or `acme/pdf-processing`; its last segment is the skill's name) and its
/// files by path relative to the skill's folder, `SKILL.md` among them.
///
/// ```
/// use charly_mcp::server::Skill;
///
/// let skill = Skill::new("release-notes")
///     .file("SKILL.md", "---\nname: release-notes\ndescription: Write release notes\n---\n\nSteps...\n")
///     .file("references/STYLE.md", "Short sentences.\n");
/// assert_eq!(skill.uri(), "skill://release-notes/SKILL.md");
/// ```
///
/// The rules are checked when the server is built ([`super::Server::new`] panics naming the
/// skill and the rule): a `SKILL.md` with `---` frontmatter holding a `name` equal to the
/// path's last segment (1–64 lowercase letters, digits and single hyphens) and a non-empty
/// `description`; file paths relative, without empty, `.` or `..` segments or hidden
/// (`.`-prefixed) names; at most [`MAX_SKILL_FILES`] files and [`MAX_SKILL_BYTES`] bytes.
#[derive(Clone)]
pub struct Skill {
    path: String,
    files: BTreeMap<String, Arc<[u8]>>,
}

impl Skill {
    /// A skill at `skill://<path>/SKILL.md` with no files yet.
    pub fn new(path: impl Into<String>) -> Skill {
        Skill { path: path.into(), files: BTreeMap::new() }
    }

    /// Adds (or replaces) the file at `path` (`/`-separated, relative to the skill's folder).
    pub fn file(mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Skill {
        self.files.insert(path.into(), bytes.into().into());
        self
    }

    /// The skill at `path` with every regular file below the folder `dir` (hidden entries,
    /// whose names start with `.`, are left out). Symbolic links are refused, so a skill never
    /// serves a file from outside its folder.
    ///
    /// # Errors
    ///
    /// A message naming the entry that cannot be read, is a symbolic link, or has a name that
    /// is not UTF-8. Whether the files make a valid skill is checked when the server is built.
    pub fn from_dir(path: impl Into<String>, dir: &Path) -> Result<Skill, String> {
        fn walk(dir: &Path, prefix: &str, skill: &mut Skill) -> Result<(), String> {
            let entries =
                std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
            let mut entries: Vec<_> = entries
                .collect::<Result<_, _>>()
                .map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
            entries.sort_by_key(std::fs::DirEntry::file_name);
            for entry in entries {
                let full = entry.path();
                let name = entry
                    .file_name()
                    .into_string()
                    .map_err(|_| format!("{}: the name is not UTF-8", full.display()))?;
                if name.starts_with('.') {
                    continue;
                }
                let kind =
                    entry.file_type().map_err(|e| format!("cannot inspect {}: {e}", full.display()))?;
                let rel = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
                if kind.is_symlink() {
                    return Err(format!(
                        "{} is a symbolic link; skills serve regular files only",
                        full.display()
                    ));
                } else if kind.is_dir() {
                    walk(&full, &rel, skill)?;
                } else if kind.is_file() {
                    let bytes =
                        std::fs::read(&full).map_err(|e| format!("cannot read {}: {e}", full.display()))?;
                    skill.files.insert(rel, bytes.into());
                }
            }
            Ok(())
        }
        let mut skill = Skill::new(path);
        walk(dir, "", &mut skill)?;
        Ok(skill)
    }

    /// The skill path (`pdf-processing`, `acme/pdf-processing`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The URI of the skill's `SKILL.md`: `skill://<path>/SKILL.md`.
    pub fn uri(&self) -> String {
        uri_of(&format!("{}/{SKILL_MD}", self.path))
    }
}

impl std::fmt::Debug for Skill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skill")
            .field("path", &self.path)
            .field("files", &self.files.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// One served file.
struct File {
    bytes: Arc<[u8]>,
    mime: Option<&'static str>,
}

/// Every skill of a server, checked and indexed once.
pub(crate) struct SkillSet {
    /// The `skills/list` entries, ordered by URI, in pages.
    pub(crate) pages: Pages<rmcp::model::Skill>,
    entries: HashMap<String, rmcp::model::Skill>,
    /// The `SKILL.md` of each skill, for `resources/list`.
    pub(crate) listed: Vec<rmcp::model::Resource>,
    files: HashMap<String, File>,
    /// Directory URI → its direct children.
    directories: HashMap<String, Vec<rmcp::model::Resource>>,
}

impl SkillSet {
    /// Checks and indexes `skills`; `page_size` as for the other lists.
    ///
    /// # Errors
    ///
    /// A message naming the skill and the rule it breaks.
    pub(crate) fn new(skills: Vec<Skill>, page_size: usize) -> Result<SkillSet, String> {
        let mut entries = BTreeMap::new();
        let mut listed = Vec::new();
        let mut files = HashMap::new();
        let mut children: BTreeMap<String, BTreeSet<(String, bool)>> = BTreeMap::new();
        for skill in skills {
            let (entry, manifest) =
                build(&skill).map_err(|e| format!("skill `{}` (skill://{}): {e}", skill.path, skill.path))?;
            if entries.contains_key(&entry.uri) {
                return Err(format!("skill `{}` is given twice; each must be unique", skill.path));
            }
            listed.push(manifest);
            for (rel, bytes) in &skill.files {
                let full = format!("{}/{rel}", skill.path);
                files.insert(uri_of(&full), File { bytes: bytes.clone(), mime: mime_of(rel) });
                // Every folder from the skill's own down to the file's, with its child.
                let segments: Vec<&str> = rel.split('/').collect();
                let mut dir = skill.path.clone();
                for (i, segment) in segments.iter().enumerate() {
                    let is_dir = i + 1 < segments.len();
                    children
                        .entry(uri_of(&dir))
                        .or_default()
                        .insert((uri_of(&format!("{dir}/{segment}")), is_dir));
                    dir = format!("{dir}/{segment}");
                }
            }
            entries.insert(entry.uri.clone(), entry);
        }
        listed.sort_by(|a, b| a.uri.cmp(&b.uri));
        let directories = children
            .into_iter()
            .map(|(dir, kids)| {
                let listing = kids
                    .into_iter()
                    .map(|(uri, is_dir)| {
                        let name = uri.rsplit('/').next().unwrap_or_default().to_owned();
                        if is_dir {
                            rmcp::model::Resource::new(uri, name).with_mime_type(DIRECTORY_MIME_TYPE)
                        } else {
                            let file = &files[&uri];
                            let mut resource = rmcp::model::Resource::new(uri.clone(), name)
                                .with_size(file.bytes.len() as u64);
                            resource.mime_type = file.mime.map(Into::into);
                            resource
                        }
                    })
                    .collect();
                (dir, listing)
            })
            .collect();
        Ok(SkillSet {
            pages: Pages::new("skills", entries.values().cloned().collect(), page_size),
            entries: entries.into_iter().collect(),
            listed,
            files,
            directories,
        })
    }

    /// Whether there are no skills (the extension is then not declared).
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is at `uri`; -32602 otherwise.
    pub(crate) fn get(&self, uri: &str) -> Result<rmcp::model::Skill, McpError> {
        self.entries.get(uri).cloned().ok_or_else(|| {
            McpError::invalid_params(format!("no skill at `{uri}`: skills/list names the skills"), None)
        })
    }

    /// Whether `uri` is a skill file.
    pub(crate) fn has_file(&self, uri: &str) -> bool {
        self.files.contains_key(uri)
    }

    /// `resources/read` of a skill file: text for textual types that are UTF-8, a base64
    /// `blob` otherwise; `None` when `uri` is no skill file.
    pub(crate) fn read(&self, uri: &str) -> Option<ReadResourceResult> {
        let file = self.files.get(uri)?;
        let text = file
            .mime
            .filter(|mime| is_textual(mime))
            .and_then(|_| std::str::from_utf8(&file.bytes).ok())
            .filter(|text| !text.contains('\0'));
        let contents = match text {
            Some(text) => ResourceContents::text(text, uri),
            None => {
                ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(&file.bytes), uri)
            }
        };
        let contents = match file.mime {
            Some(mime) => contents.with_mime_type(mime),
            None => contents,
        };
        Some(ReadResourceResult::new(vec![contents]))
    }

    /// `resources/directory/read`: the direct children of a skill folder (subfolders with
    /// MIME type `inode/directory`); -32602 for any other URI.
    pub(crate) fn directory(&self, uri: &str) -> Result<Vec<rmcp::model::Resource>, McpError> {
        self.directories.get(uri).cloned().ok_or_else(|| {
            McpError::invalid_params(
                format!("`{uri}` is not a skill directory: resources/directory/read takes a skill folder"),
                None,
            )
        })
    }
}

/// The `skills/list` entry and the `resources/list` entry of `skill`, or the rule it breaks.
fn build(skill: &Skill) -> Result<(rmcp::model::Skill, rmcp::model::Resource), String> {
    check_path(&skill.path, "the skill path")?;
    for rel in skill.files.keys() {
        check_path(rel, "a file path")?;
    }
    if skill.files.len() > MAX_SKILL_FILES {
        return Err(format!("{} files; a skill may have at most {MAX_SKILL_FILES}", skill.files.len()));
    }
    let total: u64 = skill.files.values().map(|b| b.len() as u64).sum();
    if total > MAX_SKILL_BYTES {
        return Err(format!("{total} bytes of files; a skill may have at most {MAX_SKILL_BYTES}"));
    }
    let manifest = skill.files.get(SKILL_MD).ok_or("it has no SKILL.md at its root")?;
    let frontmatter = parse_frontmatter(manifest)?;
    let uri = skill.uri();
    let resources = skill
        .files
        .iter()
        .map(|(rel, bytes)| SkillResource::from_bytes(uri_of(&format!("{}/{rel}", skill.path)), bytes))
        .collect();
    let listing = rmcp::model::Resource::new(&uri, &frontmatter.name)
        .with_description(&frontmatter.description)
        .with_mime_type(MARKDOWN)
        .with_size(manifest.len() as u64);
    let entry = rmcp::model::Skill::new(uri, frontmatter, SkillResources::Files(resources));
    entry.validate().map_err(|e| e.to_string())?;
    Ok((entry, listing))
}

/// `path` is relative, `/`-separated, with no empty, `.`, `..` or hidden segment.
fn check_path(path: &str, what: &str) -> Result<(), String> {
    if path.split('/').any(|s| s.is_empty() || s.starts_with('.')) {
        return Err(format!(
            "{what} `{path}` must be relative, `/`-separated, without empty, `.`, `..` or hidden segments"
        ));
    }
    Ok(())
}

/// The YAML frontmatter of a `SKILL.md` (between a first line `---` and the next `---`) as
/// the JSON object the extension lists, with non-empty `name` and `description` strings.
///
/// # Errors
///
/// What is missing or malformed.
pub(crate) fn parse_frontmatter(bytes: &[u8]) -> Result<SkillFrontmatter, String> {
    let object = crate::skill_md::frontmatter(bytes)?;
    for key in ["name", "description"] {
        if object.get(key).and_then(Value::as_str).is_none_or(str::is_empty) {
            return Err(format!("the SKILL.md frontmatter needs a non-empty `{key}` string"));
        }
    }
    serde_json::from_value(Value::Object(object)).map_err(|e| format!("the SKILL.md frontmatter: {e}"))
}

/// `skill://` and `path`, bytes other than unreserved ones and `/` percent-encoded.
fn uri_of(path: &str) -> String {
    let mut uri = String::from(SCHEME);
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// Types whose UTF-8 bytes are sent as `text`.
fn is_textual(mime: &str) -> bool {
    mime.starts_with("text/")
        || matches!(
            mime,
            "application/json"
                | "application/xml"
                | "application/yaml"
                | "application/toml"
                | "application/x-sh"
        )
}

/// The MIME type of a file by its extension; `None` (no `mimeType`) for unknown ones.
fn mime_of(path: &str) -> Option<&'static str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    Some(match extension.as_deref()? {
        "md" | "markdown" => MARKDOWN,
        "txt" => "text/plain",
        "html" | "htm" => "text/html",
        "csv" => "text/csv",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "xml" => "application/xml",
        "sh" => "application/x-sh",
        "py" => "text/x-python",
        "js" => "text/javascript",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SKILL: &str =
        "---\nname: pdf-tools\ndescription: Fill PDF forms\nmetadata:\n  owner: docs\n---\n\nBody.\n";

    fn set(skills: Vec<Skill>) -> Result<SkillSet, String> {
        SkillSet::new(skills, 0)
    }

    #[test]
    fn a_skill_lists_its_files_with_digests_and_its_folders() {
        let skills = set(vec![
            Skill::new("pdf-tools").file("SKILL.md", SKILL).file("references/FORMS.md", "Forms.\n"),
        ])
        .unwrap();
        let entry = skills.get("skill://pdf-tools/SKILL.md").unwrap();
        assert_eq!(entry.frontmatter.extra["metadata"]["owner"], "docs");
        let SkillResources::Files(files) = &entry.resources else { panic!("files") };
        let uris: Vec<&str> = files.iter().map(|f| f.uri.as_str()).collect();
        assert_eq!(uris, ["skill://pdf-tools/SKILL.md", "skill://pdf-tools/references/FORMS.md"]);
        files[0].verify(SKILL.as_bytes()).unwrap();
        let root = skills.directory("skill://pdf-tools").unwrap();
        assert_eq!(root.len(), 2);
        assert!(root.iter().any(|r| r.uri == "skill://pdf-tools/references" && r.is_directory()));
        assert_eq!(skills.directory("skill://pdf-tools/references").unwrap()[0].size, Some(7));
        assert_eq!(skills.directory("skill://pdf-tools/SKILL.md").unwrap_err().code.0, -32602);
        assert_eq!(skills.get("skill://other/SKILL.md").unwrap_err().code.0, -32602);
        let read = serde_json::to_value(skills.read("skill://pdf-tools/SKILL.md").unwrap()).unwrap();
        assert_eq!(read["contents"][0]["text"], SKILL);
        assert_eq!(read["contents"][0]["mimeType"], "text/markdown");
        assert_eq!(skills.listed[0].name, "pdf-tools");
        assert_eq!(skills.listed[0].description.as_deref(), Some("Fill PDF forms"));
    }

    #[test]
    fn broken_skills_are_refused_naming_the_rule() {
        let cases = [
            (Skill::new("pdf-tools").file("README.md", "x"), "no SKILL.md"),
            (Skill::new("other").file("SKILL.md", SKILL), "name"),
            (Skill::new("pdf-tools").file("SKILL.md", "no frontmatter"), "frontmatter"),
            (Skill::new("pdf-tools").file("SKILL.md", "---\nname: pdf-tools\n---\n"), "description"),
            (Skill::new("pdf-tools").file("SKILL.md", SKILL).file("../x", "x"), "relative"),
            (Skill::new("Bad_Name").file("SKILL.md", SKILL.replace("pdf-tools", "Bad_Name")), "Bad_Name"),
        ];
        for (skill, needle) in cases {
            let error = set(vec![skill.clone()]).err().unwrap_or_else(|| panic!("{skill:?} was accepted"));
            assert!(error.contains(needle), "{error:?} does not say {needle:?}");
        }
        let twice = vec![Skill::new("pdf-tools").file("SKILL.md", SKILL); 2];
        assert!(set(twice).err().unwrap().contains("twice"));
    }

    #[test]
    fn from_dir_reads_files_and_refuses_links() {
        let dir = std::env::temp_dir().join(format!("charly-skill-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("references")).unwrap();
        std::fs::write(dir.join("SKILL.md"), SKILL).unwrap();
        std::fs::write(dir.join("references/FORMS.md"), "Forms.\n").unwrap();
        std::fs::write(dir.join(".hidden"), "no").unwrap();
        let skill = Skill::from_dir("pdf-tools", &dir).unwrap();
        assert_eq!(skill.files.keys().collect::<Vec<_>>(), ["SKILL.md", "references/FORMS.md"]);
        std::os::unix::fs::symlink("/etc/passwd", dir.join("passwd")).unwrap();
        let error = Skill::from_dir("pdf-tools", &dir).unwrap_err();
        assert!(error.contains("symbolic link"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
