//! The command shape: every command returns a [`Report`] (or a [`crate::CommandError`]).
//!
//! A report is a plain type that is `Serialize`, `JsonSchema` and `Display`. On a terminal
//! `charly` prints its `Display` text, or its JSON with `--json`; over MCP the same call
//! returns the text as `text` content and the JSON as `structuredContent`, checked by the
//! client against the leaf's `outputSchema`, which the derive generates from the same type
//! (`#[mcp_tool(output = Report)]`). Commands never print.
//!
//! A report may record a failure ([`Report::failure`]): a check that found problems, a probed
//! tool whose result is an error. Its text and JSON are given all the same; the terminal then
//! exits with status 1 and prints the failure on stderr, and an MCP result carries
//! `isError: true`.
//!
//! ```
//! use charly_cli::report::{Reply, Report};
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Greeting {
//!     name: String,
//! }
//! impl std::fmt::Display for Greeting {
//!     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
//!         writeln!(f, "hello, {}", self.name)
//!     }
//! }
//! impl Report for Greeting {}
//!
//! let reply = Reply::new(&Greeting { name: "web".into() });
//! assert_eq!(reply.text, "hello, web\n");
//! assert_eq!(reply.json, serde_json::json!({"name": "web"}));
//! assert_eq!(reply.failure, None);
//! ```

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

/// What a command returns: its text (`Display`), its JSON (`Serialize`, described by
/// `JsonSchema`), and whether it records a failure.
pub trait Report: Serialize + JsonSchema + fmt::Display {
    /// Why the command failed, when the report records a failure (exit status 1, `isError`
    /// over MCP): e.g. `some checks failed`. `None` (the default) for success.
    fn failure(&self) -> Option<String> {
        None
    }

    /// The exit status a terminal run ends with when the report records a failure: the
    /// default 1, or a command's own status for leaves that run one (`shell -c`, `cmd`), as
    /// `ssh host cmd` and `podman exec` pass theirs through (1-255).
    fn exit_status(&self) -> u8 {
        1
    }

    /// Images the report carries (screenshots), returned as `image` content over MCP.
    fn images(&self) -> Vec<Image> {
        Vec::new()
    }

    /// Warnings beside a successful result (a settings file readable by others): printed on
    /// stderr as `charly: warning: ...` by the terminal, so stdout stays the value a script
    /// reads. Reports that have any also carry them in their JSON.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
}

/// An image a report carries: its MIME type and bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// `image/png`, ...
    pub mime: String,
    /// The encoded image.
    pub data: Vec<u8>,
}

/// A screenshot (`check.cdp.screenshot`, `check.vnc.screenshot`, `check.wl.screenshot`): the
/// PNG as `image` content over MCP, its figures in the JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Screenshot {
    /// The file written (mode 0644), when one was asked for: the leaf gives its full path, a
    /// plan step its `artifact:` as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// PNG size in bytes.
    pub bytes: usize,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The PNG (returned over MCP as `image` content, not in the JSON).
    #[serde(skip)]
    pub png: Vec<u8>,
}

impl fmt::Display for Screenshot {
    /// `Screenshot saved to F (N bytes, WxH)`, or `Screenshot: N bytes, WxH` without a file.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (bytes, width, height) = (self.bytes, self.width, self.height);
        match &self.file {
            Some(file) => writeln!(f, "Screenshot saved to {file} ({bytes} bytes, {width}x{height})"),
            None => writeln!(f, "Screenshot: {bytes} bytes, {width}x{height}"),
        }
    }
}

impl Report for Screenshot {
    /// The PNG, as `image/png`.
    fn images(&self) -> Vec<Image> {
        vec![Image { mime: "image/png".into(), data: self.png.clone() }]
    }
}

/// A report made uniform for the front ends: the terminal and the MCP server.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    /// The report's `Display` text.
    pub text: String,
    /// The report's JSON (always an object at the root).
    pub json: serde_json::Value,
    /// [`Report::failure`].
    pub failure: Option<String>,
    /// [`Report::exit_status`], for a failure.
    pub exit_status: u8,
    /// [`Report::images`].
    pub images: Vec<Image>,
    /// [`Report::warnings`].
    pub warnings: Vec<String>,
}

impl Reply {
    /// The reply of `report`.
    ///
    /// # Panics
    ///
    /// When the report's `Serialize` fails (a map with non-string keys): a programming error
    /// in the report type, which the test over every leaf catches.
    pub fn new<R: Report + ?Sized>(report: &R) -> Reply {
        let json = serde_json::to_value(report)
            .unwrap_or_else(|e| panic!("charly: a report failed to serialise: {e}"));
        Reply {
            text: report.to_string(),
            json,
            failure: report.failure(),
            exit_status: report.exit_status(),
            images: report.images(),
            warnings: report.warnings(),
        }
    }

    /// The JSON as `--json` prints it: pretty, with a final newline.
    pub fn json_text(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.json).expect("a JSON value serialises");
        text.push('\n');
        text
    }
}

/// `version`: charly's name and version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Version {
    /// `charly`.
    pub name: String,
    /// The crate version, e.g. `0.1.0`.
    pub version: String,
    /// Built with the `read-only` feature: no destructive tool (or command) is compiled in.
    pub read_only_build: bool,
}

impl Version {
    /// This build's version.
    pub fn current() -> Version {
        Version {
            name: "charly".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            read_only_build: cfg!(feature = "read-only"),
        }
    }
}

impl fmt::Display for Version {
    /// `charly 0.1.0`, or `charly 0.1.0 (read-only build)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let build = if self.read_only_build { " (read-only build)" } else { "" };
        writeln!(f, "{} {}{build}", self.name, self.version)
    }
}

impl Report for Version {}

/// `argv` for a person to read in a report: words joined by spaces, each word that is empty
/// or holds anything but letters, digits and `_@%+=:,./-` in single quotes (`'` as `'\''`),
/// as `sh` would read it back, so argument boundaries show (`sh -c 'echo "$1"' a`).
pub fn shown_argv<S: AsRef<str>>(argv: &[S]) -> String {
    let plain =
        |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
    argv.iter()
        .map(|w| {
            let w = w.as_ref();
            if plain(w) { w.to_owned() } else { format!("'{}'", w.replace('\'', r"'\''")) }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod shown_argv_tests {
    use super::shown_argv;

    #[test]
    fn words_that_a_shell_would_split_or_expand_are_quoted() {
        assert_eq!(shown_argv(&["foot", "-a", "term"]), "foot -a term");
        assert_eq!(shown_argv(&["sh", "-c", "echo \"$1\"; it's", ""]), r#"sh -c 'echo "$1"; it'\''s' ''"#);
    }
}

/// Most bytes of one captured stream (a command's stdout or stderr) a tool returns: 1 MiB.
/// A tool's result carries it twice (the `text` content and the `structuredContent`), so two
/// capped streams keep a reply near 4 MiB, the most charly reads of a request
/// ([`charly::server::MAX_REQUEST_BYTES`]); an uncapped 5 MB output made a 13.7 MB reply that
/// a client gave up on (issue 17 trial, L8). On a terminal output is never cut.
pub const TOOL_OUTPUT_CAP: usize = 1 << 20;

/// A captured stream as text for a tool: `bytes` whole when at most [`TOOL_OUTPUT_CAP`],
/// else its first bytes up to the cap (cut before a UTF-8 character the cap would split),
/// with how many bytes were left out (0 when none).
pub fn capped_output(bytes: &[u8]) -> (String, usize) {
    if bytes.len() <= TOOL_OUTPUT_CAP {
        return (String::from_utf8_lossy(bytes).into_owned(), 0);
    }
    let mut end = TOOL_OUTPUT_CAP;
    // A continuation byte (10xxxxxx) at the cut: back up to the character's first byte.
    while end > TOOL_OUTPUT_CAP - 3 && bytes[end] & 0xC0 == 0x80 {
        end -= 1;
    }
    (String::from_utf8_lossy(&bytes[..end]).into_owned(), bytes.len() - end)
}

/// The line a report adds after a stream [`capped_output`] cut: which stream, where, and how
/// much was left out.
pub fn cut_note(stream: &str, left_out: usize) -> String {
    format!(
        "[charly: {stream} cut after its first {TOOL_OUTPUT_CAP} bytes (the tool output cap); {left_out} more bytes \
         were left out: run it on a terminal, or write the output to a file and read it in parts]\n"
    )
}

#[cfg(test)]
mod cap_tests {
    use super::*;

    #[test]
    fn short_output_is_whole_and_long_output_is_cut_at_a_character() {
        assert_eq!(capped_output(b"ok\n"), ("ok\n".to_owned(), 0));
        let mut long = vec![b'a'; TOOL_OUTPUT_CAP - 1];
        long.extend("é and more".as_bytes());
        let (text, left) = capped_output(&long);
        assert_eq!(text.len(), TOOL_OUTPUT_CAP - 1, "the 2-byte é is not split");
        assert_eq!(left, long.len() - text.len());
    }
}
