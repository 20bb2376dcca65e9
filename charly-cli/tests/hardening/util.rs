//! The harness: a project in a temporary directory, a directory outside it, and the flipper
//! that swaps a directory of the project with a symlink leading out.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use charly_cli::project::Project;

/// What `d/x` holds inside the project.
pub(crate) const INSIDE: &str = "inside\n";
/// What `x` holds in the directory outside the project that the symlink leads to.
pub(crate) const OUTSIDE: &str = "OUTSIDE-SECRET\n";

/// A sample project with `d/x` (a real directory), `spare` (a symlink to a directory outside
/// the root holding `x`), and that outside directory.
pub(crate) struct Flippable {
    /// The project's directory.
    pub(crate) dir: tempfile::TempDir,
    /// The directory outside the root.
    pub(crate) outside: tempfile::TempDir,
    /// The project.
    pub(crate) project: Project,
}

impl Flippable {
    pub(crate) fn new() -> Flippable {
        let dir = tempfile::tempdir().unwrap();
        charly_cli::project::write_sample(dir.path()).unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        std::fs::write(dir.path().join("d/x"), INSIDE).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("x"), OUTSIDE).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("spare")).unwrap();
        let project = Project::at(dir.path());
        Flippable { dir, outside, project }
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Starts a thread that exchanges `d` and `spare` (`renameat2(RENAME_EXCHANGE)`, atomic)
    /// `flips` times, then sets the returned flag. `d` is a directory after an even number of
    /// flips and the symlink leading out after an odd one.
    pub(crate) fn flip(&self, flips: usize) -> (Arc<AtomicBool>, std::thread::JoinHandle<()>) {
        let done = Arc::new(AtomicBool::new(false));
        let root = std::fs::File::open(self.root()).unwrap();
        let flag = Arc::clone(&done);
        let handle = std::thread::spawn(move || {
            for i in 0..flips {
                rustix::fs::renameat_with(&root, "d", &root, "spare", rustix::fs::RenameFlags::EXCHANGE)
                    .unwrap_or_else(|e| panic!("flip {i}: {e}"));
                // Let the others run, as often after an even count as after an odd one.
                if i % 61 == 0 {
                    std::thread::yield_now();
                }
            }
            flag.store(true, Ordering::SeqCst);
        });
        (done, handle)
    }

    /// Files outside the root other than `x`: writes that escaped.
    pub(crate) fn escaped_writes(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.outside.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().is_none_or(|n| n != "x"))
            .collect()
    }
}
