//! Rules on tool names.

use std::collections::BTreeMap;

use charly::server::rmcp::model::Tool;

use super::Rule;
use crate::lint::{Host, Severity};

/// Claude's clients check every tool name against `^[a-zA-Z0-9_-]{1,64}$` and withhold the
/// whole tool list when one fails: claude.ai and Claude Desktop report
/// `tools.25.FrontendRemoteMcpToolDefinition.name: String should match pattern
/// '^[a-zA-Z0-9_-]{1,64}$'` (evoila/meho#2745, barryw/ImmichMCP#3), Claude Code's API calls
/// fail with `tools.11.custom.name: String should match pattern` (anthropics/claude-code#467).
/// OpenAI: `Invalid 'tools[48].name': string does not match pattern ... '^[a-zA-Z0-9_-]+$'`
/// (openai/codex#8174). GitHub Copilot: `tools.134.custom.name: String should match pattern
/// '^[a-zA-Z0-9_-]{1,128}$'` (github/copilot-cli#1879). MCP itself allows `.` and `/` (SEP-986).
pub(super) struct NamePattern;

impl Rule for NamePattern {
    fn id(&self) -> &'static str {
        "name-pattern"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn hosts(&self) -> &'static [Host] {
        &[Host::Claude, Host::Openai, Host::Copilot]
    }
    fn summary(&self) -> &'static str {
        "tool names use only a-z A-Z 0-9 _ - (no dots, slashes or spaces)"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        for tool in tools {
            let bad: Vec<char> =
                tool.name.chars().filter(|c| !c.is_ascii_alphanumeric() && !"_-".contains(*c)).collect();
            if tool.name.is_empty() {
                found.push((String::new(), "name".into(), "the name is empty".into()));
            } else if let Some(first) = bad.first() {
                found.push((
                    tool.name.to_string(),
                    "name".into(),
                    format!(
                        "{first:?} is not allowed (^[a-zA-Z0-9_-]{{1,64}}$); e.g. {:?}",
                        suggest(&tool.name)
                    ),
                ));
            }
        }
    }
}

/// The name with every disallowed character replaced by `_`.
pub(super) fn suggest(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect()
}

/// Names longer than 64 characters: claude.ai `tools.13.FrontendRemoteMcpToolDefinition.name:
/// String should have at most 64 characters` (mims-harvard/ToolUniverse#3); OpenAI function
/// names and Gemini function declarations take at most 64 (their API references).
pub(super) struct NameLength;

impl Rule for NameLength {
    fn id(&self) -> &'static str {
        "name-length"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn hosts(&self) -> &'static [Host] {
        &[Host::Claude, Host::Openai, Host::Gemini]
    }
    fn summary(&self) -> &'static str {
        "tool names are at most 64 characters"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        for tool in tools.iter().filter(|t| t.name.chars().count() > 64) {
            let n = tool.name.chars().count();
            found.push((
                tool.name.to_string(),
                "name".into(),
                format!("{n} characters, at most 64 are allowed"),
            ));
        }
    }
}

/// Two tools with one name: the Claude API refuses a request whose tool names are not unique
/// (`tools: Tool names must be unique`), OpenAI likewise; MCP says names SHOULD be unique
/// within a server (SEP-986), and a client can reach only one of them.
pub(super) struct DuplicateName;

impl Rule for DuplicateName {
    fn id(&self) -> &'static str {
        "duplicate-name"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn hosts(&self) -> &'static [Host] {
        &Host::ALL
    }
    fn summary(&self) -> &'static str {
        "every tool name is listed once"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for tool in tools {
            *count.entry(tool.name.as_ref()).or_default() += 1;
        }
        for (name, n) in count.into_iter().filter(|(_, n)| *n > 1) {
            found.push((name.to_owned(), "name".into(), format!("listed {n} times")));
        }
    }
}
