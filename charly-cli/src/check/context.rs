//! Where a plan runs: the build context (no container) or the deploy context.

use std::fmt;
use std::str::FromStr;

/// Where checks run: `build` (`charly check box`, no container) or `deploy` (`charly check
/// live`, against the running container).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
#[non_exhaustive]
pub enum Context {
    /// While building a box: no container runs.
    Build,
    /// Against a deployed, running container.
    Deploy,
}

impl Context {
    /// `build` or `deploy`.
    pub fn as_str(self) -> &'static str {
        match self {
            Context::Build => "build",
            Context::Deploy => "deploy",
        }
    }
}

impl fmt::Display for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Context {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "build" => Ok(Context::Build),
            "deploy" => Ok(Context::Deploy),
            other => Err(format!("unknown context {other:?} (expected build or deploy)")),
        }
    }
}
