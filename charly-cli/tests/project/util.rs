//! A temporary project per test.

use std::path::{Path, PathBuf};

use charly_cli::project::Project;

/// A project in a temporary directory, removed on drop.
pub(crate) struct Fixture {
    /// Keeps the directory alive.
    pub(crate) dir: tempfile::TempDir,
    /// The project in it.
    pub(crate) project: Project,
}

impl Fixture {
    /// A project with `files` (relative path, contents), plus empty `box/` and `candy/`.
    pub(crate) fn with(files: &[(&str, &str)]) -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("box")).unwrap();
        std::fs::create_dir_all(dir.path().join("candy")).unwrap();
        for (relative, contents) in files {
            let path = dir.path().join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, contents).unwrap();
        }
        let project = Project::at(dir.path());
        Fixture { dir, project }
    }

    /// The sample project.
    pub(crate) fn sample() -> Fixture {
        Fixture::with(&charly_cli::project::SAMPLE_FILES)
    }

    /// The contents of a project file.
    pub(crate) fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative)).unwrap()
    }

    /// The absolute path of a project file.
    pub(crate) fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// The root.
    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }
}

/// Panics with the error's message when `result` is not an error, and returns the message.
#[track_caller]
pub(crate) fn err_text<T: std::fmt::Debug>(result: charly_cli::project::Result<T>) -> String {
    result.expect_err("expected an error").to_string()
}
