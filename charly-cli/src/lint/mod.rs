//! `charly check mcp lint`: a server's tools against what each strict host accepts.
//!
//! MCP lets a server publish names, schemas and annotations that the hosts people run refuse:
//! Claude's and OpenAI's clients reject dotted names and then withhold the whole tool list,
//! Gemini rejects `$schema`, `$ref`, `type` lists and arrays without `items`, Copilot an object
//! without `properties`, Ajv (the MCP TypeScript SDK's validator) formats it does not know.
//! [`lint`] lists the tools and runs every rule (one small type each, in one table) over them; the report has a row per
//! host and every violation with the rule, the tool and where in the tool it is.
//!
//! | host | who |
//! |---|---|
//! | `claude` | claude.ai, Claude Desktop, Claude Code (and the Claude API) |
//! | `openai` | ChatGPT, Codex, the OpenAI API |
//! | `gemini` | Gemini CLI, the Gemini API's function declarations |
//! | `copilot` | GitHub Copilot in VS Code and the Copilot CLI |
//! | `ajv` | clients that compile schemas with Ajv: the MCP TypeScript SDK (Claude Code, Gemini CLI, OpenCode, MCP Inspector) |
//!
//! A violation of an error rule fails the host (the report records a failure: exit status 1,
//! `isError` over MCP); warnings are advice.

mod rules;
mod schema;

use std::fmt;

use charly::client::{Client, ClientError, ConnectOptions, Endpoint, connect};
use charly::server::rmcp::model::Tool;
use schemars::JsonSchema;
use serde::Serialize;

use crate::report::Report;

/// A host, as the report's rows name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Host {
    /// claude.ai, Claude Desktop, Claude Code.
    Claude,
    /// ChatGPT, Codex, the OpenAI API.
    Openai,
    /// Gemini CLI and the Gemini API.
    Gemini,
    /// GitHub Copilot (VS Code, Copilot CLI).
    Copilot,
    /// Clients that compile schemas with Ajv (the MCP TypeScript SDK).
    Ajv,
}

impl Host {
    /// Every host, in row order.
    pub const ALL: [Host; 5] = [Host::Claude, Host::Openai, Host::Gemini, Host::Copilot, Host::Ajv];

    /// The `clientInfo.name` `check mcp lint` initializes as to lint this host's row: the
    /// host's own client where a server may answer it differently (a server that names tools
    /// per client, as `charly mcp serve --tool-names auto` does, gives `claude-code` `_`-joined
    /// names), `charly` where no server is known to.
    pub const fn client_name(self) -> &'static str {
        match self {
            Host::Claude => "claude-code",
            Host::Openai => "codex-mcp-client",
            Host::Copilot => "github-copilot-developer",
            Host::Gemini | Host::Ajv => "charly",
        }
    }

    /// `claude`, `openai`, `gemini`, `copilot`, `ajv`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Openai => "openai",
            Host::Gemini => "gemini",
            Host::Copilot => "copilot",
            Host::Ajv => "ajv",
        }
    }
}

/// What a violation costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The host refuses the tool or the whole list.
    Error,
    /// Advice: no host refuses it.
    Warning,
}

/// One broken rule in one tool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Violation {
    /// The rule's id (`name-pattern`, `schema-ref`, ...).
    pub rule: String,
    /// `error` or `warning`.
    pub severity: Severity,
    /// The hosts that refuse it (or, for a warning, are hurt by it).
    pub hosts: Vec<String>,
    /// The tool's name (empty for a tool without one).
    pub tool: String,
    /// Where in the tool: `name`, `inputSchema/properties/x/type`, `outputSchema/format`, ...
    pub at: String,
    /// What is wrong.
    pub message: String,
}

/// A rule, as the report lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RuleInfo {
    /// Its id.
    pub id: String,
    /// `error` or `warning`.
    pub severity: Severity,
    /// The hosts it speaks for.
    pub hosts: Vec<String>,
    /// What it checks.
    pub summary: String,
}

/// One host's verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct HostVerdict {
    /// The host (`claude`, `openai`, `gemini`, `copilot`, `ajv`).
    pub host: String,
    /// No error rule of this host is broken.
    pub ok: bool,
    /// Violations of its error rules.
    pub errors: usize,
    /// Violations of its warning rules.
    pub warnings: usize,
    /// The rules broken, errors first.
    pub rules: Vec<String>,
}

/// `check mcp lint`: the verdict per host, and every violation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LintReport {
    /// The server's name from `initialize`, when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// How many tools it lists.
    pub tools: usize,
    /// One row per host.
    pub hosts: Vec<HostVerdict>,
    /// Every violation, in rule order then tool order.
    pub violations: Vec<Violation>,
    /// The rules that ran.
    pub rules: Vec<RuleInfo>,
}

/// Lints a tool list (`server` names it in the report).
pub fn lint_tools(tools: &[Tool], server: Option<String>) -> LintReport {
    lint_parsed(tools, &[], server)
}

/// Lints a tool list as the server sent it: each tool that parses as a `Tool` goes through
/// every rule, the others (no `inputSchema`, a schema that is not an object, ...) are
/// violations of the shape rules (`input-schema-root`, `tool-shape`), so one malformed tool is
/// reported, not a failed listing.
pub fn lint_wire(tools: &[serde_json::Value], server: Option<String>) -> LintReport {
    let mut parsed = Vec::new();
    let mut malformed = Vec::new();
    for tool in tools {
        match serde_json::from_value::<Tool>(tool.clone()) {
            Ok(t) => parsed.push(t),
            Err(_) => malformed.push(tool.clone()),
        }
    }
    let mut report = lint_parsed(&parsed, &malformed, server);
    report.tools = tools.len();
    report
}

fn lint_parsed(tools: &[Tool], malformed: &[serde_json::Value], server: Option<String>) -> LintReport {
    let violations = rules::run(tools, malformed);
    let hosts = Host::ALL
        .iter()
        .map(|host| {
            let mine: Vec<&Violation> =
                violations.iter().filter(|v| v.hosts.iter().any(|h| h == host.as_str())).collect();
            let count = |s: Severity| mine.iter().filter(|v| v.severity == s).count();
            let mut broken: Vec<(Severity, &str)> = Vec::new();
            for v in &mine {
                if !broken.iter().any(|(_, r)| *r == v.rule) {
                    broken.push((v.severity, &v.rule));
                }
            }
            broken.sort_by_key(|(s, _)| *s == Severity::Warning);
            HostVerdict {
                host: host.as_str().to_owned(),
                ok: count(Severity::Error) == 0,
                errors: count(Severity::Error),
                warnings: count(Severity::Warning),
                rules: broken.into_iter().map(|(_, r)| r.to_owned()).collect(),
            }
        })
        .collect();
    let rules = rules::RULES
        .iter()
        .map(|r| RuleInfo {
            id: r.id().to_owned(),
            severity: r.severity(),
            hosts: r.hosts().iter().map(|h| h.as_str().to_owned()).collect(),
            summary: r.summary().to_owned(),
        })
        .collect();
    LintReport { server, tools: tools.len(), hosts, violations, rules }
}

/// Lists every tool of an open session (as JSON: a malformed tool is a violation, not an
/// error) and lints them.
///
/// # Errors
///
/// `tools/list` failed ([`ClientError`]).
pub async fn lint_on(client: &Client) -> Result<LintReport, ClientError> {
    let tools = client.list_tools_raw().await?;
    let server = client.server_info().map(|info| info.name).filter(|n| !n.is_empty());
    Ok(lint_wire(&tools, server))
}

/// `check mcp lint`: connects, lints, closes. With [`ConnectOptions::client_name`] it lints
/// what the server lists to that client, once, for every host. Without, it lints each host's
/// row from what the server lists to that host's client ([`Host::client_name`]): one
/// connection per distinct name (four), so a server that names tools per client is judged on
/// what each host would get. Violations found for several hosts are one, naming them all.
///
/// # Errors
///
/// Connecting or `tools/list` failed.
pub async fn lint(endpoint: &Endpoint, options: &ConnectOptions) -> Result<LintReport, ClientError> {
    if options.client_name.is_some() {
        return lint_as(endpoint, options).await;
    }
    let mut reports: Vec<(&'static str, LintReport)> = Vec::new();
    for host in Host::ALL {
        if reports.iter().any(|(name, _)| *name == host.client_name()) {
            continue;
        }
        let options = ConnectOptions { client_name: Some(host.client_name().to_owned()), ..options.clone() };
        reports.push((host.client_name(), lint_as(endpoint, &options).await?));
    }
    let of = |host: Host| &reports.iter().find(|(name, _)| *name == host.client_name()).expect("linted").1;
    let first = &reports[0].1;
    let mut violations: Vec<Violation> = Vec::new();
    for host in Host::ALL {
        for v in of(host).violations.iter().filter(|v| v.hosts.iter().any(|h| h == host.as_str())) {
            let same = |w: &&mut Violation| {
                (w.rule.as_str(), w.tool.as_str(), w.at.as_str(), w.message.as_str())
                    == (v.rule.as_str(), v.tool.as_str(), v.at.as_str(), v.message.as_str())
            };
            match violations.iter_mut().find(same) {
                Some(seen) => seen.hosts.push(host.as_str().to_owned()),
                None => violations.push(Violation { hosts: vec![host.as_str().to_owned()], ..v.clone() }),
            }
        }
    }
    // Rule order, as one listing gives (the sort is stable: tool order within a rule stays).
    let rank = |rule: &str| first.rules.iter().position(|r| r.id == rule).unwrap_or(usize::MAX);
    violations.sort_by_key(|v| rank(&v.rule));
    let hosts = Host::ALL
        .iter()
        .map(|host| {
            of(*host).hosts.iter().find(|h| h.host == host.as_str()).cloned().expect("a row per host")
        })
        .collect();
    Ok(LintReport {
        server: first.server.clone(),
        tools: first.tools,
        hosts,
        violations,
        rules: first.rules.clone(),
    })
}

/// Connects as `options` say, lints, closes.
async fn lint_as(endpoint: &Endpoint, options: &ConnectOptions) -> Result<LintReport, ClientError> {
    let client = connect(endpoint, options).await?;
    let result = lint_on(&client).await;
    client.close().await;
    result
}

impl fmt::Display for LintReport {
    /// A table, a row per host (`host  result  errors  warnings  rules`), then a line per
    /// violation: `error name-pattern box.new.project name: "." is not allowed ... (claude, openai, copilot)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let server = self.server.as_deref().map(|s| format!("{s}: ")).unwrap_or_default();
        writeln!(f, "{server}{} tools", self.tools)?;
        writeln!(f, "{:<8} {:<6} {:>6} {:>8}  rules", "host", "result", "errors", "warnings")?;
        for h in &self.hosts {
            let result = if h.ok { "ok" } else { "FAIL" };
            let rules = if h.rules.is_empty() { "-".to_owned() } else { h.rules.join(", ") };
            writeln!(f, "{:<8} {:<6} {:>6} {:>8}  {rules}", h.host, result, h.errors, h.warnings)?;
        }
        for v in &self.violations {
            let severity = match v.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            let tool = if v.tool.is_empty() { "(no name)" } else { &v.tool };
            writeln!(f, "{severity} {} {tool} {}: {} ({})", v.rule, v.at, v.message, v.hosts.join(", "))?;
        }
        Ok(())
    }
}

impl Report for LintReport {
    /// `hosts refuse tools: claude, openai` when any error rule is broken.
    fn failure(&self) -> Option<String> {
        let failing: Vec<&str> = self.hosts.iter().filter(|h| !h.ok).map(|h| h.host.as_str()).collect();
        (!failing.is_empty()).then(|| format!("hosts refuse tools: {}", failing.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(json: serde_json::Value) -> Tool {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn a_clean_tool_passes_every_host() {
        let t = tool(serde_json::json!({
            "name": "greet", "description": "Say hello",
            "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
            "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
        }));
        let report = lint_tools(&[t], Some("s".into()));
        assert!(report.violations.is_empty(), "{report}");
        assert_eq!(report.failure(), None);
        assert!(
            report.to_string().starts_with(
                "s: 1 tools\nhost     result errors warnings  rules\nclaude   ok          0        0  -\n"
            ),
            "{report}"
        );
    }

    #[test]
    fn a_dotted_name_fails_claude_openai_and_copilot() {
        let t = tool(serde_json::json!({
            "name": "box.list", "description": "x",
            "inputSchema": {"type": "object", "properties": {}},
            "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
        }));
        let report = lint_tools(&[t], None);
        assert_eq!(report.failure().as_deref(), Some("hosts refuse tools: claude, openai, copilot"));
        assert_eq!(
            report.violations[0].message,
            "'.' is not allowed (^[a-zA-Z0-9_-]{1,64}$); e.g. \"box_list\""
        );
    }
}
