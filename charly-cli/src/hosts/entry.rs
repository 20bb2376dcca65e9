//! The server entry each host expects, as an ordered JSON object (for Codex, the keys of its
//! `[mcp_servers.<name>]` table).
//!
//! | host | stdio | Streamable HTTP | bearer token from `$VAR` |
//! |---|---|---|---|
//! | claude-code | `type: stdio`, `command`, `args` | `type: http`, `url` | `headers.Authorization: "Bearer ${VAR}"` |
//! | claude-desktop | `command`, `args` | not in the file (Settings > Connectors) | - |
//! | cursor | `type: stdio`, `command`, `args` | `url` | `headers.Authorization: "Bearer ${env:VAR}"` |
//! | vscode | `type: stdio`, `command`, `args` | `type: http`, `url` | `headers.Authorization: "Bearer ${env:VAR}"` |
//! | codex | `command`, `args` | `url` | `bearer_token_env_var = "VAR"` |
//! | gemini | `command`, `args` | `httpUrl` | `headers.Authorization: "Bearer ${VAR}"` |

use serde_json::{Map, Value, json};

use super::{HostKind, HostsError};

/// What the host should run or reach.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// A command the host starts, speaking MCP on stdio.
    Stdio {
        /// The executable.
        command: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// A running Streamable HTTP server.
    Http {
        /// Its URL.
        url: String,
        /// The environment variable holding the bearer token, if any.
        token_env: Option<String>,
    },
}

/// Every key an entry of any host may carry that charly writes: on an update, the ones the new
/// entry does not set are removed (switching stdio to HTTP drops `command`), and every other key
/// the user added (`disabled`, `timeout`, `trust`, `env` on a stdio entry, ...) stays.
pub(crate) const OWNED_KEYS: [&str; 7] =
    ["type", "command", "args", "url", "httpUrl", "headers", "bearer_token_env_var"];

/// Keys that only a stdio entry means (`env`, Codex's `env_vars` and `cwd`, VS Code's
/// `envFile`): an entry switched to HTTP loses them, since Codex refuses its whole config for
/// `env` on a Streamable HTTP server ("env is not supported for streamable_http"), and an
/// `env` left behind may hold a secret no HTTP entry uses.
const STDIO_ONLY_KEYS: [&str; 4] = ["env", "env_vars", "cwd", "envFile"];

/// The keys an update removes from an existing entry: those of [`OWNED_KEYS`] the new `entry`
/// does not set and, when `entry` is an HTTP one, the stdio-only keys.
pub(crate) fn stale_keys(entry: &Map<String, Value>) -> impl Iterator<Item = &'static str> + '_ {
    let http = entry.contains_key("url") || entry.contains_key("httpUrl");
    OWNED_KEYS
        .into_iter()
        .filter(|k| !entry.contains_key(*k))
        .chain(STDIO_ONLY_KEYS.into_iter().filter(move |_| http))
}

/// The entry `host` expects for `transport`.
///
/// # Errors
///
/// [`HostsError::Unsupported`] for an HTTP server in Claude Desktop's file, which takes stdio
/// servers only.
pub(crate) fn entry(host: HostKind, transport: &Transport) -> Result<Map<String, Value>, HostsError> {
    // How each host spells a reference to an environment variable inside a string:
    // Claude Code expands `${VAR}` in `.mcp.json` (command, args, env, url, headers; "Environment
    // variable expansion in .mcp.json", code.claude.com/docs/en/mcp); Cursor `${env:NAME}`
    // ("Config interpolation", cursor.com/docs/context/mcp); VS Code its predefined variable
    // `${env:NAME}` ("Variables reference", code.visualstudio.com/docs/reference/variables-reference,
    // which mcp.json supports); Gemini CLI `$VAR` or `${VAR}` in any settings string ("Gemini CLI
    // configuration", geminicli.com/docs/cli/configuration).
    let reference = |var: &str| match host {
        HostKind::Cursor | HostKind::Vscode => format!("${{env:{var}}}"),
        _ => format!("${{{var}}}"),
    };
    let value = match (host, transport) {
        (HostKind::ClaudeCode | HostKind::Cursor | HostKind::Vscode, Transport::Stdio { command, args }) => {
            json!({"type": "stdio", "command": command, "args": args})
        }
        (
            HostKind::ClaudeDesktop | HostKind::Codex | HostKind::Gemini,
            Transport::Stdio { command, args },
        ) => {
            json!({"command": command, "args": args})
        }
        (HostKind::ClaudeDesktop, Transport::Http { .. }) => {
            return Err(HostsError::Unsupported {
                host,
                what: "a server URL (--url): its config file takes stdio servers only; add a remote server under \
                       Settings > Connectors, or install the stdio server (no --url)"
                    .into(),
            });
        }
        (HostKind::Codex, Transport::Http { url, token_env }) => {
            // Codex reads the token from the variable itself (`bearer_token_env_var`, "Streamable
            // HTTP servers", developers.openai.com/codex/mcp); it refuses an inline token.
            let mut v = json!({"url": url});
            if let Some(var) = token_env {
                v["bearer_token_env_var"] = json!(var);
            }
            v
        }
        (_, Transport::Http { url, token_env }) => {
            let mut v = match host {
                HostKind::ClaudeCode | HostKind::Vscode => json!({"type": "http", "url": url}),
                // Gemini CLI: `httpUrl` is Streamable HTTP (`url` would be SSE).
                HostKind::Gemini => json!({"httpUrl": url}),
                _ => json!({"url": url}),
            };
            if let Some(var) = token_env {
                v["headers"] = json!({"Authorization": format!("Bearer {}", reference(var))});
            }
            v
        }
    };
    match value {
        Value::Object(map) => Ok(map),
        _ => unreachable!("every entry is an object"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_always_a_reference_in_the_hosts_own_spelling() {
        let http =
            Transport::Http { url: "http://127.0.0.1:18765/mcp".into(), token_env: Some("TOK".into()) };
        let header = |host| entry(host, &http).unwrap()["headers"]["Authorization"].clone();
        assert_eq!(header(HostKind::ClaudeCode), "Bearer ${TOK}");
        assert_eq!(header(HostKind::Cursor), "Bearer ${env:TOK}");
        assert_eq!(header(HostKind::Vscode), "Bearer ${env:TOK}");
        assert_eq!(header(HostKind::Gemini), "Bearer ${TOK}");
        assert_eq!(entry(HostKind::Codex, &http).unwrap()["bearer_token_env_var"], "TOK");
        assert_eq!(entry(HostKind::Gemini, &http).unwrap()["httpUrl"], "http://127.0.0.1:18765/mcp");
        let err = entry(HostKind::ClaudeDesktop, &http).unwrap_err().to_string();
        assert!(err.contains("Settings > Connectors"), "{err}");
    }
}
