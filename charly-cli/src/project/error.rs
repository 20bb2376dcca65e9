//! The error type of every project operation.
//!
//! Messages are written for people: each names the file (relative to the project root where there is
//! one), the path segment or node at fault, what was wrong and what is allowed instead.

use std::path::PathBuf;

use charly::quote::Quoted;

use super::problem::Problem;

/// Everything that can go wrong while reading, editing, generating or building a charly project.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProjectError {
    /// A file or directory could not be read, written or created.
    #[error("cannot {action} {}: {source}", Quoted::path(path))]
    Io {
        /// What was being done (`read`, `write`, `create directory`, ...).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// The directory holds no `charly.yml`.
    #[error(
        "{} is not a charly project (no charly.yml): create one with `charly box new project`, \
         or name a project with -C/--dir, CHARLY_PROJECT_DIR or CHARLY_PROJECT_REPO",
        dir.display()
    )]
    NotAProject {
        /// The directory that was searched.
        dir: PathBuf,
    },

    /// The project directory itself is not there (`-C` names a directory that does not exist).
    #[error(
        "project directory {} does not exist (create a project there with `charly box new project`, or \
         name another with -C/--dir)",
        dir.display()
    )]
    NoProjectDir {
        /// The directory named.
        dir: PathBuf,
    },

    /// A file that a command would create already exists.
    #[error("{} already exists; refusing to overwrite it", path.display())]
    AlreadyExists {
        /// The existing file.
        path: PathBuf,
    },

    /// A YAML file that a command needs is missing or has no content.
    #[error("{} is {reason}", path.display())]
    FileNotFound {
        /// The file.
        path: PathBuf,
        /// `missing`, `empty`, ...
        reason: &'static str,
    },

    /// yaml-edit's validator flagged the file (a duplicate key, tab indentation, an undefined
    /// alias, ...), so it is not edited: an edit would turn it into garbage.
    #[error("refusing to edit {}: {location}: {message}; fix the file first{}", path.display(), tab_hint(*tabs))]
    UnsafeYaml {
        /// The file.
        path: PathBuf,
        /// `line:column` of the first problem.
        location: String,
        /// The validator's message.
        message: String,
        /// Whether the file has a tab-indented line (the message then says to indent with
        /// spaces).
        tabs: bool,
    },

    /// A file holds several YAML documents (`---` lines between them).
    #[error("{} holds {documents} YAML documents; charly edits files of one document", path.display())]
    MultiDocument {
        /// The file.
        path: PathBuf,
        /// How many documents it holds.
        documents: usize,
    },

    /// A base image given to `box.new.box` that is not an image reference.
    #[error("{}", base_problem(base))]
    InvalidBase {
        /// The base as given.
        base: String,
    },

    /// A YAML file (or a YAML value given on the command line) does not parse.
    #[error("{what} is not valid YAML: {message}")]
    InvalidYaml {
        /// The file, or `the value "..."`.
        what: String,
        /// The parser's message.
        message: String,
    },

    /// A value given to `box.set`/`candy.set` that would not be written as given.
    #[error("the value {value:?} {reason}")]
    ValueNotKept {
        /// The value as given.
        value: String,
        /// Why, and how to write it instead.
        reason: String,
    },

    /// A dot path does not follow charly's path syntax.
    #[error(
        "bad path {path:?}: {message} (keys are separated by `.` and `[N]` is item N of a list; in a key, \
         write `\\.`, `\\[`, `\\]` or `\\\\` for those characters, or quote the key as \"a.b\")"
    )]
    PathSyntax {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        message: String,
    },

    /// A segment of a dot path holds something that is not a map, so no key can be set under it.
    #[error(
        "cannot set {path:?} in {}: segment `{segment}` holds {found}, not a map; only maps (or an \
         empty value) can hold keys{}",
        file.display(),
        if *found == "a list" { "; `[N]` is item N of a list" } else { "" }
    )]
    NotAMap {
        /// The edited file.
        file: PathBuf,
        /// The full dot path.
        path: String,
        /// The segment whose value is in the way.
        segment: String,
        /// What it holds (`a scalar`, `a list`, `an alias`).
        found: &'static str,
    },

    /// A segment of a dot path holds something that is not a list, so `[N]` cannot index it.
    #[error(
        "cannot set {path:?} in {}: segment `{segment}` holds {found}, not a list; `[N]` indexes a list",
        file.display()
    )]
    NotAListAt {
        /// The edited file.
        file: PathBuf,
        /// The full dot path.
        path: String,
        /// The segment whose value is in the way.
        segment: String,
        /// What it holds.
        found: &'static str,
    },

    /// An index past the end of its list.
    #[error(
        "cannot set {path:?} in {}: `{segment}` has {len} item(s), so an index there is {}",
        file.display(),
        item_range(*len)
    )]
    NoSuchItem {
        /// The edited file.
        file: PathBuf,
        /// The full dot path.
        path: String,
        /// The list's segment.
        segment: String,
        /// Its length (0 for a list the edit would create).
        len: usize,
    },

    /// An edit would go through an alias, changing the anchored node and every alias of it.
    #[error(
        "cannot edit {path:?} in {}: `{segment}` is an alias of the anchor `&{anchor}`, and an edit \
         through it would change that anchored node and every alias of it; edit the anchored node \
         itself, or set `{segment}` to a value of its own first",
        file.display()
    )]
    ThroughAlias {
        /// The edited file.
        file: PathBuf,
        /// The full dot path.
        path: String,
        /// The segment that holds the alias.
        segment: String,
        /// The anchor's name, without `&`.
        anchor: String,
    },

    /// An edit would go through a key that a merge key (`<<:`) brings in.
    #[error(
        "cannot edit {path:?} in {}: `{segment}` comes from a merge key (`<<:`), and an edit there \
         would change the merged node or hide the rest of it; write the key in that map by hand \
         (box write) or edit the merged node itself",
        file.display()
    )]
    ThroughMerge {
        /// The edited file.
        file: PathBuf,
        /// The full dot path.
        path: String,
        /// The segment only the merge key provides.
        segment: String,
    },

    /// A value that should be a list is something else.
    #[error("cannot edit {path:?} in {}: it holds {found}, not a list", file.display())]
    NotAList {
        /// The edited file.
        file: PathBuf,
        /// The dot path of the value.
        path: String,
        /// What it holds instead.
        found: &'static str,
    },

    /// An edit did not read back from the re-parsed result; the file was left unchanged.
    #[error(
        "editing {} went wrong: after the edit, {path:?} did not read back as expected; the file \
         was left unchanged",
        file.display()
    )]
    EditNotVerified {
        /// The file.
        file: PathBuf,
        /// The dot path that failed the check.
        path: String,
    },

    /// An edit would add problems to the project (what `box.validate` would then report); the
    /// file was left unchanged.
    #[error(
        "refusing to edit {}: the edit would add {} problem(s) to the project (nothing was written):\n{}",
        file.display(),
        problems.len(),
        list_problems(problems)
    )]
    EditAddsProblems {
        /// The file the edit was for, relative to the project root.
        file: PathBuf,
        /// The problems the project would have after the edit and does not have now.
        problems: Vec<Problem>,
    },

    /// A `candy.set` path that starts outside the candy's own nodes.
    #[error(
        "candy {candy}: `{path}` starts outside the candy's nodes; a `candy set` path starts at one \
         of them ({}) or at a new node named `{candy}-<name>`; edit another node with `box set` or \
         `candy set` on its own candy",
        nodes.join(", ")
    )]
    OutsideCandy {
        /// The candy.
        candy: String,
        /// The path as given.
        path: String,
        /// The nodes of the candy's file.
        nodes: Vec<String>,
    },

    /// No box of that name is defined.
    #[error("no box named `{name}` in charly.yml (boxes: {})", list_or_none(known))]
    NoSuchBox {
        /// The name asked for.
        name: String,
        /// The boxes that exist.
        known: Vec<String>,
    },

    /// No candy of that name exists.
    #[error("no candy named `{name}` (expected candy/{name}/charly.yml; candies: {})", list_or_none(known))]
    NoSuchCandy {
        /// The name asked for.
        name: String,
        /// The candies that exist.
        known: Vec<String>,
    },

    /// A node name (box or candy) is not allowed.
    #[error(
        "`{name}` is not a valid {what} name: use 1 to 63 lowercase letters, digits, `-` and `_`, \
         starting with a letter"
    )]
    InvalidName {
        /// The name given.
        name: String,
        /// `box` or `candy`.
        what: &'static str,
    },

    /// A node of that name already exists somewhere in the project.
    #[error("a node named `{name}` already exists in {}; node names are unique in a project", file.display())]
    DuplicateNode {
        /// The name.
        name: String,
        /// The file holding the existing node.
        file: PathBuf,
    },

    /// A package name would not be safe on an install command line.
    #[error(
        "`{package}` is not a valid package name: use letters, digits and `.`, `_`, `+`, `-`, `:`, \
         `@`, `~`, `=`, `/`, not starting with `-`"
    )]
    InvalidPackage {
        /// The package name given.
        package: String,
    },

    /// More packages in one call than [`super::MAX_PACKAGES_PER_CALL`].
    #[error("{given} packages in one call; add at most {max} at a time")]
    TooManyPackages {
        /// How many were given.
        given: usize,
        /// The limit.
        max: usize,
    },

    /// A file too large for `box.cat` to return as a tool, or for `resources/read`
    /// ([`super::MAX_CAT_BYTES`]).
    #[error(
        "{} is {size} bytes; box.cat returns at most {max} bytes (1 MiB) over MCP: read it on a \
         terminal with `charly box cat {}`",
        path.display(),
        path.display()
    )]
    TooLargeToShow {
        /// The file, relative to the project root.
        path: PathBuf,
        /// Its size in bytes (at least, when it grew while it was read).
        size: u64,
        /// The limit in bytes.
        max: u64,
    },

    /// A path given to `write`/`cat` would leave the project root.
    #[error("refusing path {:?}: {reason}", Quoted::new(path.as_str()))]
    UnsafePath {
        /// The path as given.
        path: String,
        /// Why it is refused and what is allowed.
        reason: String,
    },

    /// The base image's distribution is not one charly can install packages on.
    #[error(
        "box `{box_name}`: cannot tell the distribution of base image `{base}`, so no package manager \
         can be picked; use a fedora/centos/rhel/ubi, debian/ubuntu or archlinux image, or set \
         `{box_name}.box.distro` to fedora, debian, ubuntu or arch"
    )]
    UnknownDistro {
        /// The box.
        box_name: String,
        /// Its base image.
        base: String,
    },

    /// The project has problems that stop the command.
    #[error("the project has {} problem(s):\n{}", problems.len(), list_problems(problems))]
    Invalid {
        /// Every problem found.
        problems: Vec<Problem>,
    },

    /// An external program is not installed or could not be started.
    #[error(
        "`{program}` is needed to {purpose} but could not be run: {source}; install it or put it on PATH"
    )]
    ToolMissing {
        /// The program.
        program: String,
        /// What it was needed for.
        purpose: &'static str,
        /// Why it could not be started.
        #[source]
        source: std::io::Error,
    },

    /// An external program ran and failed.
    #[error("`{command}` failed ({status}){}", stderr_suffix(stderr))]
    CommandFailed {
        /// The command line.
        command: String,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// The end of what it wrote to stderr.
        stderr: String,
    },

    /// The call was cancelled (see [`super::Cancel`]) before the change's point of no return:
    /// nothing was written.
    #[error("cancelled before {} was changed; nothing was written", file.display())]
    Cancelled {
        /// The file that would have been written, relative to the project root.
        file: PathBuf,
    },

    /// A project repository spec is not understood.
    #[error("bad project repository {spec:?}: {message} (use owner/name[@ref], a git URL, or a local path)")]
    RepoSpec {
        /// The spec as given.
        spec: String,
        /// What is wrong with it.
        message: String,
    },
}

/// A `Result` whose error is a [`ProjectError`].
pub type Result<T, E = ProjectError> = std::result::Result<T, E>;

impl ProjectError {
    /// This error as a problem of the file it is about, for `box.validate` and the warnings of
    /// the leaves that only read: the words that follow `FILE: `, without the file's name again
    /// and without "refusing to edit" (a read is not an edit).
    pub(crate) fn file_problem(&self) -> String {
        match self {
            ProjectError::UnsafeYaml { location, message, tabs, .. } => {
                format!("{location}: {message}; fix the file first{}", tab_hint(*tabs))
            }
            ProjectError::MultiDocument { documents, .. } => {
                format!(
                    "holds {documents} YAML documents; charly reads files of one document (a `---` line starts another)"
                )
            }
            ProjectError::InvalidYaml { message, .. } => format!("not valid YAML: {message}"),
            ProjectError::FileNotFound { reason, .. } => format!("the file is {reason}"),
            other => other.to_string(),
        }
    }

    /// An [`Io`](Self::Io) error for `path`.
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ProjectError::Io { action, path: path.into(), source }
    }

    /// [`ProjectError::UnsafePath`] of `path`, saying why.
    pub(crate) fn unsafe_path(path: &std::path::Path, reason: &str) -> Self {
        ProjectError::UnsafePath { path: path.display().to_string(), reason: reason.to_owned() }
    }
}

/// The advice for a file the validator refused: to indent with spaces when it has tabs.
fn tab_hint(tabs: bool) -> &'static str {
    if tabs { " (indent with spaces, not tabs)" } else { "" }
}

/// What is wrong with a base image given to `box.new.box`.
fn base_problem(base: &str) -> String {
    const EXAMPLE: &str = "give an image reference, e.g. quay.io/fedora/fedora:43";
    if base.trim().is_empty() {
        format!("the base image is empty; {EXAMPLE}")
    } else {
        format!("the base image {base:?} has spaces, which an image reference never has; {EXAMPLE}")
    }
}

/// The indexes of a list of `len` items an edit may name: `0` for an empty list (append), else
/// `0 to N-1, or N to append`.
fn item_range(len: usize) -> String {
    match len {
        0 => "[0] (a new or empty list starts there)".to_owned(),
        n => format!("[0] to [{}], or [{n}] to append", n - 1),
    }
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() { "none".to_owned() } else { names.join(", ") }
}

fn list_problems(problems: &[Problem]) -> String {
    problems.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n")
}

fn stderr_suffix(stderr: &str) -> String {
    let stderr = stderr.trim();
    if stderr.is_empty() { String::new() } else { format!(": {stderr}") }
}
