//! The project authoring surface: everything the `charly box ...` and `charly candy ...` commands
//! do, as plain functions.
//!
//! | command                      | function                                   |
//! |------------------------------|--------------------------------------------|
//! | `box.new.project <dir>`      | [`new_project`]                            |
//! | `box.new.box <name> --base`  | [`Project::new_box`]                       |
//! | `box.new.candy <name>`       | [`Project::new_candy`]                     |
//! | `box.set <path> <value>`     | [`Project::set`]                           |
//! | `candy.set <name> <path> <v>`| [`Project::candy_set`]                     |
//! | `box.add-candy`/`rm-candy`   | [`Project::add_candy`], [`Project::rm_candy`] |
//! | `candy.add-{rpm,deb,pac,aur}`| [`Project::add_packages`] with a [`PackageSection`] |
//! | `box.write`/`box.cat`        | [`Project::write`], [`Project::cat`]       |
//! | `box.validate`               | [`Project::validate`]                      |
//! | `box.inspect <box>`          | [`Project::inspect`]                       |
//! | `box.list.{boxes,candies,checks}` | [`Project::list_boxes`], [`Project::list_candies`], [`Project::list_checks`] |
//! | `box.list.{aliases,routes,services,targets,volumes}` | [`Project::list_aliases`], [`Project::list_routes`], [`Project::list_services`], [`Project::list_targets`], [`Project::list_volumes`] |
//! | `box.generate`/`box.build`   | [`Project::generate`], [`Project::build`]  |
//! | `box.fetch`/`box.refresh`    | [`RepoCache::fetch`], [`RepoCache::refresh`] |
//! | `doctor`                     | [`doctor()`]                               |
//! | which project (`mcp serve`)  | [`ProjectSources::locate`]                 |
//!
//! Every function takes typed arguments and returns a report (data that is also the text a
//! person reads, see [`crate::report`]) or a [`ProjectError`]; nothing here prints.
//!
//! ```
//! use charly_cli::project::{new_project, PackageSection};
//!
//! let dir = tempfile::tempdir()?;
//! let project = new_project(dir.path())?.project();
//! project.new_box("web", "quay.io/fedora/fedora:43")?;
//! project.new_candy("tools")?;
//! let added = project.add_packages("tools", PackageSection::Rpm, &["curl".into()])?;
//! assert_eq!(added.to_string(), "added curl to tools.candy.distro.fedora.package in candy/tools/charly.yml\n");
//! project.add_candy("web", "tools")?;
//! assert!(project.validate()?.problems.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod atomic;
mod beneath;
mod cancel;
pub mod candy_files;
mod checks;
mod containerfile;
mod doctor;
mod edit;
mod error;
mod files;
mod gitguard;
mod given;
mod image;
mod keypath;
mod lists;
mod locate;
mod model;
mod names;
mod problem;
mod repo;
mod report;
pub mod runtime;
mod sample;
mod scaffold;
mod tools;
mod validate;
pub(crate) mod yamlfile;

pub(crate) use atomic::{EditLock, write_atomic, write_atomic_mode};
pub(crate) use beneath::Missing;
pub use cancel::Cancel;
pub use containerfile::{MCP_PROVIDE_LABEL, render as render_containerfile};
pub use doctor::{DoctorReport, VmHost, doctor};
pub use edit::{MAX_PACKAGES_PER_CALL, PackageSection};
pub use error::{ProjectError, Result};
pub use files::MAX_CAT_BYTES;
pub use gitguard::{refuse_git_dir, refuse_git_path};
pub use image::{Family, ResolvedBox, ResolvedCandy};
pub use keypath::{KeyPath, Segment};
pub use lists::{AliasList, BuildTarget, RouteList, ServiceList, TargetList, VolumeList};
pub use locate::{ProjectOrigin, ProjectSources};
pub use model::{Kind, Node, PROJECT_FILE, Project};
pub use names::{check_alias_command, check_alias_name, check_env, check_name, check_package};
pub use problem::Problem;
pub use repo::{RepoCache, RepoSpec};
pub use report::{
    BoxList, Built, CandyInspection, CandyList, CheckList, CheckSummary, Created, Edited, Fetched, FileText,
    Generated, Inspection, RepoAction, Validation, Written,
};
pub use sample::{SAMPLE_FILES, write_sample};
pub use scaffold::{NEW_PROJECT_FILE, new_project};

/// Writes one line to a command's output sink.
pub(crate) fn say(out: &mut dyn std::io::Write, line: std::fmt::Arguments<'_>) -> Result<()> {
    writeln!(out, "{line}").map_err(|e| ProjectError::io("write output to", "the output sink", e))
}
