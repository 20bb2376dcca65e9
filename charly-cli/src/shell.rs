//! `charly completions <shell>` and `charly man [COMMAND]...`: the shell completion script
//! (`clap_complete`) and the man page in roff (`clap_mangen`), both generated from the same
//! clap tree the parser uses, so they never drift from the real flags. Terminal-only: they are
//! `#[mcp_tool(skip)]` (a script for the caller's shell is no use to an agent).

use std::fmt;

use clap::CommandFactory as _;
use schemars::JsonSchema;
use serde::Serialize;

use crate::cli::Cli;
use crate::error::CommandError;
use crate::report::Report;

/// A generated text for the shell: a completion script or a man page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ShellText {
    /// What it is: `completions bash`, `man charly-check-mcp`, ...
    pub kind: String,
    /// The text, printed as it is (`--json` gives it as a string).
    pub text: String,
}

impl fmt::Display for ShellText {
    /// The text, unchanged.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Report for ShellText {}

/// The completion script of `charly` for `shell`, for the binary name `charly`.
pub fn completions(shell: clap_complete::Shell) -> ShellText {
    let mut cmd = Cli::command();
    let mut buffer = Vec::new();
    clap_complete::generate(shell, &mut cmd, "charly", &mut buffer);
    ShellText { kind: format!("completions {shell}"), text: String::from_utf8_lossy(&buffer).into_owned() }
}

/// The man page (roff, section 1) of `charly`, or of the subcommand at `path`
/// (`["check", "mcp"]` → `charly-check-mcp(1)`).
///
/// # Errors
///
/// [`CommandError::Usage`] when `path` names no subcommand; the message lists the ones there are.
pub fn man(path: &[String]) -> Result<ShellText, CommandError> {
    let mut cmd = Cli::command();
    // `build` gives every subcommand its display name (`charly-check-mcp`), the page's title.
    cmd.build();
    let mut page = cmd;
    for (depth, name) in path.iter().enumerate() {
        let found = page.find_subcommand(name).cloned();
        page = found.ok_or_else(|| {
            let parent = std::iter::once("charly").chain(path[..depth].iter().map(String::as_str));
            let names: Vec<&str> = page.get_subcommands().map(|c| c.get_name()).collect();
            CommandError::Usage(format!(
                "`{}` has no subcommand {name:?} (it has: {})",
                parent.collect::<Vec<_>>().join(" "),
                names.join(", ")
            ))
        })?;
    }
    let title = page.get_display_name().unwrap_or(page.get_name()).to_owned();
    let mut buffer = Vec::new();
    // A subcommand has no version of its own: the page's source names charly's.
    let source = concat!("charly ", env!("CARGO_PKG_VERSION"));
    clap_mangen::Man::new(page).source(source).render(&mut buffer).map_err(CommandError::Io)?;
    Ok(ShellText { kind: format!("man {title}"), text: String::from_utf8_lossy(&buffer).into_owned() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_man_page_for_a_subcommand_and_an_error_for_none() {
        let page = man(&["check".into(), "mcp".into()]).unwrap();
        assert_eq!(page.kind, "man charly-check-mcp");
        assert!(page.text.starts_with(".ie \\n(.g .ds Aq"), "{}", &page.text[..80]);
        assert!(page.text.contains(".TH charly-check-mcp 1"), "{}", page.text);
        let version = concat!("\"charly ", env!("CARGO_PKG_VERSION"), "\"");
        let title = page.text.lines().find(|l| l.starts_with(".TH ")).unwrap_or_default();
        assert!(title.contains(version), "{title}");
        let err = man(&["check".into(), "nope".into()]).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "`charly check` has no subcommand \"nope\" (it has: mcp, cdp, dbus, vnc, wl, run,"
            ),
            "{err}"
        );
    }

    #[test]
    fn every_shell_has_a_script() {
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
            clap_complete::Shell::Elvish,
            clap_complete::Shell::PowerShell,
        ] {
            let script = completions(shell);
            assert!(script.text.contains("charly"), "{shell}");
        }
    }
}
