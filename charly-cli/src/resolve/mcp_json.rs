//! `.mcp.json`: the `mcpServers` map MCP hosts use to name their servers.
//!
//! ```json
//! {"mcpServers": {
//!   "files": {"command": "npx", "args": ["-y", "@scope/server"], "env": {"ROOT": "/srv"}},
//!   "web":   {"type": "http", "url": "https://example.test/mcp", "headers": {"Authorization": "Bearer x"}},
//!   "old":   {"type": "sse", "url": "http://127.0.0.1:3001/sse"}
//! }}
//! ```
//!
//! A server with `command` is stdio; one with `url` is HTTP, its transport from `type` (or
//! `transport`), Streamable HTTP when absent. Servers keep the file's order.
//!
//! As in MCP hosts' files, `${VAR}` and `${VAR:-default}` in `command`, `args`, `env`, `cwd`,
//! `url` and `headers` are replaced from the environment (an unset variable without a default
//! is an error naming it), so tokens stay out of the file.

use std::path::Path;

use serde_json::{Map, Value};

use super::ResolveError;
use charly::client::{Endpoint, StdioCommand, Target, TransportKind};

/// Parses the text of a `.mcp.json`. `base_dir` (the file's directory) becomes the working
/// directory of stdio servers whose `cwd` is relative.
///
/// # Errors
///
/// [`ResolveError::McpJson`] naming the server and the field when the file is not JSON, has
/// no `mcpServers` object, or a server is malformed (no `command`/`url`, wrong field types, an
/// unknown `type`).
pub fn parse_mcp_json(text: &str, base_dir: Option<&Path>) -> Result<Vec<Endpoint>, ResolveError> {
    parse_mcp_json_with_env(text, base_dir, &|name| std::env::var(name).ok())
}

/// [`parse_mcp_json`] with `${VAR}` looked up through `env` instead of the process
/// environment.
///
/// # Errors
///
/// As [`parse_mcp_json`], plus an unset variable without a default.
pub fn parse_mcp_json_with_env(
    text: &str,
    base_dir: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Endpoint>, ResolveError> {
    parse_servers(text, base_dir, env, None)
}

/// [`parse_mcp_json`] for a run that uses the server named `wanted` only: an unset variable in
/// another server's entry is no error (that server keeps its `${VAR}` text), as MCP hosts
/// only warn about it; one in `wanted`'s entry is. `wanted` `""` (a listing that dials none)
/// names no entry.
///
/// # Errors
///
/// As [`parse_mcp_json`], for `wanted`'s variables.
pub fn parse_mcp_json_for(
    text: &str,
    base_dir: Option<&Path>,
    wanted: &str,
) -> Result<Vec<Endpoint>, ResolveError> {
    parse_servers(text, base_dir, &|name| std::env::var(name).ok(), Some(wanted))
}

fn parse_servers(
    text: &str,
    base_dir: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
    wanted: Option<&str>,
) -> Result<Vec<Endpoint>, ResolveError> {
    let bad = |message: String| ResolveError::McpJson(message);
    let root: Value = serde_json::from_str(text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    let servers = root
        .get("mcpServers")
        .ok_or_else(|| bad("no \"mcpServers\" object".into()))?
        .as_object()
        .ok_or_else(|| bad("\"mcpServers\" is not an object".into()))?;
    servers
        .iter()
        .map(|(name, server)| {
            let server = match (expand_value(server, env), wanted) {
                (Ok(server), _) => server,
                (Err(_), Some(wanted)) if wanted != name => server.clone(),
                (Err(m), _) => return Err(ResolveError::McpJson(format!("server {name:?}: {m}"))),
            };
            parse_server(name, &server, base_dir)
        })
        .collect()
}

/// Expands `${VAR}` / `${VAR:-default}` in every string of `value` (keys untouched).
fn expand_value(value: &Value, env: &dyn Fn(&str) -> Option<String>) -> Result<Value, String> {
    Ok(match value {
        Value::String(s) => Value::String(expand(s, env)?),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| expand_value(v, env)).collect::<Result<_, _>>()?)
        }
        Value::Object(map) => Value::Object(
            map.iter().map(|(k, v)| Ok((k.clone(), expand_value(v, env)?))).collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

/// Expands `${VAR}` / `${VAR:-default}` in `text` with `env`.
///
/// # Errors
///
/// The variable that is not set (and has no default), never its would-be value.
pub(crate) fn expand(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start + 2..].find('}') else { break };
        let inner = &rest[start + 2..start + 2 + len];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        let value = match (env(name), default) {
            (Some(v), _) => v,
            (None, Some(d)) => d.to_owned(),
            (None, None) => {
                return Err(format!(
                    "environment variable {name} is not set (write ${{{name}:-default}} for a fallback)"
                ));
            }
        };
        out.push_str(&rest[..start]);
        out.push_str(&value);
        rest = &rest[start + 2 + len + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Reads and parses a `.mcp.json` file.
///
/// # Errors
///
/// [`ResolveError::Io`] when it cannot be read, else as [`parse_mcp_json`].
pub fn load_mcp_json(path: &Path) -> Result<Vec<Endpoint>, ResolveError> {
    load_mcp_json_for(path, None)
}

/// [`load_mcp_json`], with [`parse_mcp_json_for`] when the run uses one server, `wanted`.
///
/// # Errors
///
/// As [`load_mcp_json`].
pub fn load_mcp_json_for(path: &Path, wanted: Option<&str>) -> Result<Vec<Endpoint>, ResolveError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ResolveError::Io { what: path.display().to_string(), message: e.to_string() })?;
    let parsed = match wanted {
        Some(wanted) => parse_mcp_json_for(&text, path.parent(), wanted),
        None => parse_mcp_json(&text, path.parent()),
    };
    parsed.map_err(|e| match e {
        ResolveError::McpJson(m) => ResolveError::McpJson(format!("{}: {m}", path.display())),
        other => other,
    })
}

fn parse_server(name: &str, server: &Value, base_dir: Option<&Path>) -> Result<Endpoint, ResolveError> {
    let bad = |message: String| ResolveError::McpJson(format!("server {name:?}: {message}"));
    let map = server.as_object().ok_or_else(|| bad("is not an object".into()))?;
    let kind = match map.get("type").or_else(|| map.get("transport")) {
        None => None,
        Some(Value::String(s)) => Some(s.parse::<TransportKind>().map_err(|e| bad(e.to_string()))?),
        Some(_) => return Err(bad("\"type\" is not a string".into())),
    };
    let target = if let Some(command) = map.get("command") {
        if matches!(kind, Some(k) if k != TransportKind::Stdio) {
            return Err(bad(format!(
                "has a \"command\" but type {}",
                kind.map(|k| k.as_str()).unwrap_or("")
            )));
        }
        let command = command.as_str().ok_or_else(|| bad("\"command\" is not a string".into()))?.to_owned();
        let args = string_list(map.get("args")).map_err(|m| bad(format!("\"args\" {m}")))?;
        let env = string_map(map.get("env")).map_err(|m| bad(format!("\"env\" {m}")))?;
        let cwd = match map.get("cwd") {
            None => None,
            Some(Value::String(dir)) => {
                let dir = Path::new(dir);
                Some(match base_dir {
                    Some(base) if dir.is_relative() => base.join(dir),
                    _ => dir.to_path_buf(),
                })
            }
            Some(_) => return Err(bad("\"cwd\" is not a string".into())),
        };
        Target::Stdio(StdioCommand { command, args, env, cwd })
    } else if let Some(url) = map.get("url") {
        let url = url.as_str().ok_or_else(|| bad("\"url\" is not a string".into()))?;
        let transport = kind.unwrap_or(TransportKind::StreamableHttp);
        let headers = string_map(map.get("headers")).map_err(|m| bad(format!("\"headers\" {m}")))?;
        let endpoint = Endpoint::url(url, transport).map_err(|e| bad(e.to_string()))?;
        return Ok(Endpoint { name: name.to_owned(), ..endpoint.with_headers(headers) });
    } else {
        return Err(bad("has neither \"command\" (stdio) nor \"url\" (http, sse)".into()));
    };
    Ok(Endpoint { name: name.to_owned(), target })
}

fn string_list(value: Option<&Value>) -> Result<Vec<String>, String> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned).ok_or_else(|| "must hold strings only".to_owned()))
            .collect(),
        Some(_) => Err("is not a list".into()),
    }
}

fn string_map(value: Option<&Value>) -> Result<Vec<(String, String)>, String> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => map_strings(map),
        Some(_) => Err("is not an object".into()),
    }
}

fn map_strings(map: &Map<String, Value>) -> Result<Vec<(String, String)>, String> {
    map.iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), s.clone())),
            Value::Number(n) => Ok((k.clone(), n.to_string())),
            Value::Bool(b) => Ok((k.clone(), b.to_string())),
            _ => Err(format!("value of {k:?} is not a string")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"{"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "srv"], "env": {"ROOT": "/srv", "N": 2}, "cwd": "sub"},
        "web": {"type": "http", "url": "http://127.0.0.1:8080/mcp", "headers": {"X-Key": "k"}},
        "old": {"transport": "sse", "url": "http://127.0.0.1:3001/sse"},
        "plain": {"url": "http://127.0.0.1:9/mcp"}
    }}"#;

    #[test]
    fn parses_every_kind_in_order() {
        let servers = parse_mcp_json(SAMPLE, Some(Path::new("/proj"))).unwrap();
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["files", "web", "old", "plain"]);
        let Target::Stdio(cmd) = &servers[0].target else { panic!("stdio") };
        assert_eq!(cmd.command, "npx");
        assert_eq!(cmd.args, ["-y", "srv"]);
        assert_eq!(cmd.env, [("ROOT".to_owned(), "/srv".to_owned()), ("N".to_owned(), "2".to_owned())]);
        assert_eq!(cmd.cwd.as_deref(), Some(Path::new("/proj/sub")));
        assert_eq!(servers[1].transport(), TransportKind::StreamableHttp);
        let Target::Http { headers, .. } = &servers[1].target else { panic!("http") };
        assert_eq!(headers, &[("X-Key".to_owned(), "k".to_owned())]);
        assert_eq!(servers[2].transport(), TransportKind::Sse);
        assert_eq!(servers[3].transport(), TransportKind::StreamableHttp);
    }

    #[test]
    fn environment_variables_are_expanded() {
        let env = |name: &str| (name == "TOKEN").then(|| "s3cret".to_owned());
        let text = r#"{"mcpServers": {
            "web": {"url": "http://${HOST:-127.0.0.1}:8080/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "cmd": {"command": "srv", "args": ["--key=${TOKEN}", "$HOME", "${unclosed"]}
        }}"#;
        let servers = parse_mcp_json_with_env(text, None, &env).unwrap();
        let Target::Http { url, headers, .. } = &servers[0].target else { panic!("http") };
        assert_eq!(url, "http://127.0.0.1:8080/mcp");
        assert_eq!(headers, &[("Authorization".to_owned(), "Bearer s3cret".to_owned())]);
        let Target::Stdio(cmd) = &servers[1].target else { panic!("stdio") };
        assert_eq!(cmd.args, ["--key=s3cret", "$HOME", "${unclosed"]);
        let missing = r#"{"mcpServers": {"x": {"url": "http://h/${NOPE}"}}}"#;
        assert_eq!(
            parse_mcp_json_with_env(missing, None, &env).unwrap_err().to_string(),
            "invalid .mcp.json: server \"x\": environment variable NOPE is not set (write ${NOPE:-default} for a fallback)"
        );
    }

    #[test]
    fn malformed_servers_are_named() {
        let cases = [
            ("[]", r#"no "mcpServers" object"#),
            (r#"{"mcpServers": []}"#, r#""mcpServers" is not an object"#),
            (
                r#"{"mcpServers": {"x": {}}}"#,
                r#"server "x": has neither "command" (stdio) nor "url" (http, sse)"#,
            ),
            (
                r#"{"mcpServers": {"x": {"url": "http://h/", "type": "ws"}}}"#,
                r#"server "x": unsupported mcp transport "ws" (expected http, sse or stdio)"#,
            ),
            (
                r#"{"mcpServers": {"x": {"command": "a", "args": "b"}}}"#,
                r#"server "x": "args" is not a list"#,
            ),
            (
                r#"{"mcpServers": {"x": {"command": "a", "type": "sse"}}}"#,
                r#"server "x": has a "command" but type sse"#,
            ),
        ];
        for (text, message) in cases {
            let err = parse_mcp_json(text, None).unwrap_err();
            assert_eq!(err.to_string(), format!("invalid .mcp.json: {message}"), "{text}");
        }
    }

    #[test]
    fn an_unset_variable_only_counts_in_the_server_used() {
        // `charly mcp install --url ... --token-env VAR` writes such an entry beside others.
        let text = r#"{"mcpServers": {
            "local": {"command": "charly", "args": ["mcp", "serve", "--stdio"]},
            "remote": {"type": "http", "url": "http://127.0.0.1:1/mcp",
                       "headers": {"Authorization": "Bearer ${CHARLY_TEST_UNSET_TOKEN_5821}"}}
        }}"#;
        let found = parse_mcp_json_for(text, None, "local").unwrap();
        assert_eq!(found.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["local", "remote"]);
        let err = parse_mcp_json_for(text, None, "remote").unwrap_err().to_string();
        assert!(err.contains("server \"remote\"") && err.contains("CHARLY_TEST_UNSET_TOKEN_5821"), "{err}");
        assert!(parse_mcp_json(text, None).is_err(), "listing every server still needs every variable");
    }
}
