//! A value given to `box.set` or `candy.set`, read as the YAML it is and written as given.
//!
//! The value is parsed as YAML and the parsed node is what the edit writes. A value YAML would
//! not write back as given is refused with the reason and how to write it instead, never
//! changed silently (trial t28, L1):
//!
//! | given          | written or refused                                            |
//! |----------------|---------------------------------------------------------------|
//! | `fedora`, `42`, `[a, b]`, `{k: v}` | as given                                  |
//! | `!!binary aGk=` | as given, tag included                                       |
//! | `''` (nothing) | `""`: the empty string (left unquoted it would read as null)  |
//! | `a # b`        | refused: ` # b` is a comment, which is not part of the value; quote the text to set it |
//! | `&anchor x`, `*b` | refused: charly writes values, not anchors or aliases      |
//! | `a` `---` `b`  | refused: two documents                                        |

use std::str::FromStr;

use yaml_edit::{SyntaxKind, YamlFile, YamlNode};

use super::error::{ProjectError, Result};
use super::yamlfile;

/// Parses `text`, a value given on the command line or as a tool argument, for an edit that
/// writes it (see the module docs).
///
/// # Errors
/// [`ProjectError::ValueNotKept`] for a value that would not be written as given;
/// [`ProjectError::InvalidYaml`] for one that does not parse.
pub(crate) fn parse_given(text: &str) -> Result<YamlNode> {
    if text.trim().is_empty() {
        // Double-quoted YAML is JSON string syntax.
        return yamlfile::parse_value(&serde_json::Value::String(text.to_owned()).to_string());
    }
    let refused = |reason: String| ProjectError::ValueNotKept { value: text.to_owned(), reason };
    let documents = YamlFile::from_str(text).map_or(1, |file| file.documents().count());
    if documents > 1 {
        return Err(refused(format!("holds {documents} YAML documents; a value is one")));
    }
    let tokens = yaml_edit::lex(text);
    let token = |kind: SyntaxKind| tokens.iter().find(|(k, _)| *k == kind).map(|(_, t)| *t);
    let quoted = serde_json::Value::String(text.to_owned()).to_string();
    if let Some(alias) = token(SyntaxKind::REFERENCE) {
        return Err(refused(format!(
            "holds the alias `{alias}`; charly writes values, not aliases or anchors: give the value itself, \
             or quote the text to set it ({quoted})"
        )));
    }
    if let Some(anchor) = token(SyntaxKind::ANCHOR) {
        return Err(refused(format!(
            "defines the anchor `{anchor}`; charly writes values, not anchors or aliases: give the value \
             without it, or quote the text to set it ({quoted})"
        )));
    }
    let comment_lost = |written: &str| {
        tokens.iter().find(|(k, t)| *k == SyntaxKind::COMMENT && !written.contains(t)).map(|(_, t)| *t)
    };
    let node = match yamlfile::parse_value(text) {
        Ok(node) => node,
        // A value that is only a comment does not parse as a document.
        Err(e) => match comment_lost("") {
            Some(comment) => return Err(refused(comment_reason(comment, "nothing", &quoted))),
            None => return Err(e),
        },
    };
    let written = node.to_string();
    if let Some(comment) = comment_lost(&written) {
        return Err(refused(comment_reason(comment, &format!("`{}`", written.trim()), &quoted)));
    }
    Ok(node)
}

fn comment_reason(comment: &str, written: &str, quoted: &str) -> String {
    format!(
        "would be written as {written}: YAML reads `{comment}` as a comment, which is not part of the \
         value; to set the text, quote it ({quoted})"
    )
}
