//! [`Problem`]: one thing wrong with a project, as `box.validate` and [`super::ProjectError`]
//! report it.

use std::fmt;
use std::path::{Path, PathBuf};

/// One thing wrong with a project.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Problem {
    /// The file, relative to the project root.
    pub file: PathBuf,
    /// The node, when the problem is in one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl Problem {
    /// A problem with a whole file.
    pub fn file(file: &Path, message: impl Into<String>) -> Problem {
        Problem { file: file.to_owned(), node: None, message: message.into() }
    }

    /// A problem with one node.
    pub(crate) fn node(node: &super::Node, message: impl Into<String>) -> Problem {
        Problem { file: node.file.clone(), node: Some(node.name.clone()), message: message.into() }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.node {
            Some(node) => write!(f, "{}: node `{node}`: {}", self.file.display(), self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}
