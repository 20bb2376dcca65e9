//! The embedded sample project (DESIGN.md's example: a `hello` box and a `hello-svc` candy), served
//! when `charly mcp serve` is given no project.

use std::path::Path;

use super::beneath::Beneath;
use super::cancel::Cancel;
use super::error::{ProjectError, Result};
use super::files::{Put, put};
use super::model::{PROJECT_FILE, Project};

/// The sample's files: path relative to the project root, and contents.
pub const SAMPLE_FILES: [(&str, &str); 3] = [
    ("charly.yml", include_str!("../../assets/sample/charly.yml")),
    ("candy/hello-svc/charly.yml", include_str!("../../assets/sample/candy/hello-svc/charly.yml")),
    ("box/README.md", include_str!("../../assets/sample/box/README.md")),
];

/// Writes the sample project into `dir` (created if missing) and opens it. A directory that already
/// holds a `charly.yml` is left as it is (the sample was written there before, or it is a project).
pub fn write_sample(dir: &Path) -> Result<Project> {
    if dir.join(PROJECT_FILE).exists() {
        return Project::open(dir);
    }
    std::fs::create_dir_all(dir).map_err(|e| ProjectError::io("create directory", dir, e))?;
    let root = Beneath::open(dir).map_err(|e| ProjectError::io("open directory", dir, e))?;
    for (relative, contents) in SAMPLE_FILES {
        match put(&root, Path::new(relative), contents.as_bytes(), Put::CreateNew, &Cancel::default()) {
            Ok(()) | Err(ProjectError::AlreadyExists { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Project::open(dir)
}
