//! The `charly check mcp <method>` commands as plain functions: typed options in, output
//! written to a `&mut dyn Write`, a [`Status`] (or a [`ClientError`]) out.

use std::fmt;
use std::io::Write;
use std::str::FromStr;

use charly::server::rmcp::model::JsonObject;
use serde_json::json;

use super::print;
use super::progress::ProgressBar;
use charly::client::ClientError;
use charly::client::Endpoint;
use charly::client::{Client, ConnectOptions, ProgressFn, connect};

/// A client method, as named on the command line and in check plans (`mcp: <method>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// `ping` → `ok`.
    Ping,
    /// `servers` → `name\turl\ttransport`, without dialling.
    Servers,
    /// `list-tools` → `name\tfirst line of description`.
    ListTools,
    /// `list-resources` → `uri\tname\tmime`.
    ListResources,
    /// `list-prompts` → `name\tdescription`.
    ListPrompts,
    /// `call` → the tool's text content; `isError` → exit status 1.
    Call,
    /// `read` → the resource's text contents, blobs as placeholders.
    Read,
}

impl Method {
    /// Every method, in the order the allowlist is printed.
    pub const ALL: [Method; 7] = [
        Method::Ping,
        Method::Servers,
        Method::ListTools,
        Method::ListResources,
        Method::ListPrompts,
        Method::Call,
        Method::Read,
    ];

    /// The method's name: `ping`, `servers`, `list-tools`, ...
    pub const fn as_str(self) -> &'static str {
        match self {
            Method::Ping => "ping",
            Method::Servers => "servers",
            Method::ListTools => "list-tools",
            Method::ListResources => "list-resources",
            Method::ListPrompts => "list-prompts",
            Method::Call => "call",
            Method::Read => "read",
        }
    }

    /// The allowlist as printed in errors: `ping, servers, list-tools, list-resources,
    /// list-prompts, call, read`.
    pub fn allowed() -> String {
        Method::ALL.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", ")
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for a name that is not a [`Method`]; its message lists the allowed set.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown mcp method {:?} (allowed: {})", .0, Method::allowed())]
pub struct UnknownMethod(pub String);

impl FromStr for Method {
    type Err = UnknownMethod;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Method::ALL.into_iter().find(|m| m.as_str() == s).ok_or_else(|| UnknownMethod(s.to_owned()))
    }
}

/// How a finished command should exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// Exit status 0.
    Success,
    /// Exit status 1: the method ran but reported failure (a tool result with `isError`).
    Failure,
}

impl Status {
    /// 0 or 1.
    pub fn code(self) -> u8 {
        match self {
            Status::Success => 0,
            Status::Failure => 1,
        }
    }
}

/// How progress notifications are shown.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum ProgressMode {
    /// An indicatif bar on stderr when stderr is a terminal, nothing otherwise (the default).
    #[default]
    Auto,
    /// Never.
    Off,
    /// Hand every notification to this callback.
    Callback(ProgressFn),
}

impl fmt::Debug for ProgressMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProgressMode::Auto => "Auto",
            ProgressMode::Off => "Off",
            ProgressMode::Callback(_) => "Callback",
        })
    }
}

/// Options shared by the methods that dial a server.
#[derive(Clone, Debug, Default)]
pub struct MethodOptions {
    /// Timeout (per operation), stdio stderr handling. Its `progress` is replaced according
    /// to [`MethodOptions::progress`].
    pub connect: ConnectOptions,
    /// `--json`: print the full result as pretty JSON instead of the text lines.
    pub json: bool,
    /// Progress display for `call`.
    pub progress: ProgressMode,
}

/// One method invocation with its arguments, as a check plan step or the CLI builds it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Request {
    /// `ping`.
    Ping,
    /// `list-tools`.
    ListTools,
    /// `list-resources`.
    ListResources,
    /// `list-prompts`.
    ListPrompts,
    /// `call --tool T [--input JSON]`.
    Call {
        /// The tool name.
        tool: String,
        /// The arguments object.
        input: Option<JsonObject>,
    },
    /// `read --uri U`.
    Read {
        /// The resource URI.
        uri: String,
    },
}

/// Parses `--input`: a JSON object (or nothing).
///
/// # Errors
///
/// [`ClientError::InvalidInput`] when it is not JSON or not an object.
pub fn parse_input(input: Option<&str>) -> Result<Option<JsonObject>, ClientError> {
    let Some(text) = input.map(str::trim).filter(|t| !t.is_empty()) else { return Ok(None) };
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(map)) => Ok(Some(map)),
        Ok(other) => Err(ClientError::InvalidInput(format!(
            "--input must be a JSON object, got {}",
            match other {
                serde_json::Value::Array(_) => "an array",
                serde_json::Value::String(_) => "a string",
                serde_json::Value::Number(_) => "a number",
                serde_json::Value::Bool(_) => "a boolean",
                _ => "null",
            }
        ))),
        Err(e) => Err(ClientError::InvalidInput(format!("--input is not valid JSON: {e}"))),
    }
}

/// `servers`: prints the endpoints without dialling any of them.
///
/// # Errors
///
/// Write errors ([`ClientError::Io`]).
pub fn servers(endpoints: &[Endpoint], json: bool, out: &mut dyn Write) -> Result<Status, ClientError> {
    if json {
        let list: Vec<_> = endpoints
            .iter()
            .map(|e| json!({"name": e.name, "url": e.location(), "transport": e.transport().as_str()}))
            .collect();
        write_json(out, &list)?;
    } else {
        print::write_servers(out, endpoints)?;
    }
    out.flush()?;
    Ok(Status::Success)
}

/// `ping`: prints `ok`.
///
/// # Errors
///
/// Connecting, the request or writing failed.
pub async fn ping(
    endpoint: &Endpoint,
    options: &MethodOptions,
    out: &mut dyn Write,
) -> Result<Status, ClientError> {
    run(endpoint, &Request::Ping, options, out).await
}

/// `list-tools`: every page, `name\tfirst line of description`.
///
/// # Errors
///
/// As [`ping`], plus [`ClientError::Pagination`].
pub async fn list_tools(
    endpoint: &Endpoint,
    options: &MethodOptions,
    out: &mut dyn Write,
) -> Result<Status, ClientError> {
    run(endpoint, &Request::ListTools, options, out).await
}

/// `list-resources`: every page, `uri\tname\tmime`.
///
/// # Errors
///
/// As [`list_tools`].
pub async fn list_resources(
    endpoint: &Endpoint,
    options: &MethodOptions,
    out: &mut dyn Write,
) -> Result<Status, ClientError> {
    run(endpoint, &Request::ListResources, options, out).await
}

/// `list-prompts`: every page, `name\tdescription`.
///
/// # Errors
///
/// As [`list_tools`].
pub async fn list_prompts(
    endpoint: &Endpoint,
    options: &MethodOptions,
    out: &mut dyn Write,
) -> Result<Status, ClientError> {
    run(endpoint, &Request::ListPrompts, options, out).await
}

/// `call --tool T [--input JSON]`: the tool's content; [`Status::Failure`] when the result
/// has `isError: true` (its text is printed all the same).
///
/// # Errors
///
/// [`ClientError::InvalidInput`] for a bad `--input`, else as [`ping`].
pub async fn call(
    endpoint: &Endpoint,
    tool: &str,
    input: Option<&str>,
    options: &MethodOptions,
    out: &mut dyn Write,
) -> Result<Status, ClientError> {
    let input = parse_input(input)?;
    run(endpoint, &Request::Call { tool: tool.to_owned(), input }, options, out).await
}

/// `read --uri U`: the resource's contents.
///
/// # Errors
///
/// As [`ping`].
pub async fn read(
    endpoint: &Endpoint,
    uri: &str,
    options: &MethodOptions,
    out: &mut dyn Write,
) -> Result<Status, ClientError> {
    run(endpoint, &Request::Read { uri: uri.to_owned() }, options, out).await
}

/// Connects, runs one request, prints its result and closes the session.
///
/// # Errors
///
/// As [`ping`].
pub async fn run(
    endpoint: &Endpoint,
    request: &Request,
    options: &MethodOptions,
    out: &mut dyn Write,
) -> Result<Status, ClientError> {
    let mut connect_options = options.connect.clone();
    let bar = match (&options.progress, request) {
        (ProgressMode::Callback(f), _) => {
            connect_options.progress = Some(f.clone());
            None
        }
        (ProgressMode::Auto, Request::Call { .. }) => {
            let bar = ProgressBar::on_terminal();
            connect_options.progress = bar.as_ref().map(ProgressBar::callback);
            bar
        }
        _ => None,
    };
    let client = connect(endpoint, &connect_options).await?;
    let result = run_on(&client, request, options.json, out).await;
    if let Some(bar) = bar {
        bar.finish();
    }
    client.close().await;
    result
}

/// Runs one request on an open session and prints its result.
///
/// # Errors
///
/// The request or writing failed.
pub async fn run_on(
    client: &Client,
    request: &Request,
    json: bool,
    out: &mut dyn Write,
) -> Result<Status, ClientError> {
    let mut status = Status::Success;
    match request {
        Request::Ping => {
            client.ping().await?;
            if json {
                write_json(out, &json!({}))?;
            } else {
                writeln!(out, "ok")?;
            }
        }
        Request::ListTools => {
            let tools = client.list_tools().await?;
            if json { write_json(out, &json!({ "tools": tools }))? } else { print::write_tools(out, &tools)? }
        }
        Request::ListResources => {
            let resources = client.list_resources().await?;
            if json {
                write_json(out, &json!({ "resources": resources }))?
            } else {
                print::write_resources(out, &resources)?
            }
        }
        Request::ListPrompts => {
            let prompts = client.list_prompts().await?;
            if json {
                write_json(out, &json!({ "prompts": prompts }))?
            } else {
                print::write_prompts(out, &prompts)?
            }
        }
        Request::Call { tool, input } => {
            let result = client.call_tool(tool, input.clone()).await?;
            if result.is_error == Some(true) {
                status = Status::Failure;
            }
            if json { write_json(out, &result)? } else { print::write_call_result(out, &result)? }
        }
        Request::Read { uri } => {
            let result = client.read_resource(uri).await?;
            if json { write_json(out, &result)? } else { print::write_read_result(out, &result)? }
        }
    }
    out.flush()?;
    Ok(status)
}

/// Runs a client future to completion for a synchronous caller (the `charly` CLI): a fresh
/// current-thread tokio runtime with I/O and timers. The method futures borrow a
/// `&mut dyn Write`, so they are not `Send`; a current-thread runtime runs them as they are.
///
/// Callers already inside a tokio runtime (e.g. a tool served by `charly mcp serve`) must
/// `.await` the future instead: tokio refuses to start a runtime inside another.
///
/// # Errors
///
/// The runtime could not be built (an OS error).
pub fn block_on<F: Future>(future: F) -> std::io::Result<F::Output> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    Ok(runtime.block_on(future))
}

fn write_json(out: &mut dyn Write, value: &impl serde::Serialize) -> Result<(), ClientError> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(std::io::Error::from)?;
    writeln!(out)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_round_trip() {
        for m in Method::ALL {
            assert_eq!(m.as_str().parse::<Method>().unwrap(), m);
        }
        let err = "list".parse::<Method>().unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"unknown mcp method "list" (allowed: ping, servers, list-tools, list-resources, list-prompts, call, read)"#
        );
    }

    #[test]
    fn servers_are_listed_without_dialling() {
        let http = Endpoint {
            name: "web".into(),
            ..Endpoint::url("http://127.0.0.1:1/mcp", charly::client::TransportKind::Sse).unwrap()
        };
        let cmd = charly::client::StdioCommand {
            command: "node".into(),
            args: vec!["s.js".into()],
            ..Default::default()
        };
        let stdio = Endpoint { name: "local".into(), ..Endpoint::stdio(cmd) };
        let mut out = Vec::new();
        assert_eq!(servers(&[http.clone(), stdio.clone()], false, &mut out).unwrap(), Status::Success);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "web\thttp://127.0.0.1:1/mcp\tsse\nlocal\tnode s.js\tstdio\n"
        );
        let mut out = Vec::new();
        servers(&[http, stdio], true, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v[1], json!({"name": "local", "url": "node s.js", "transport": "stdio"}));
    }

    #[test]
    fn block_on_runs_a_method_synchronously() {
        let mut out = Vec::new();
        let status = block_on(async { servers(&[], false, &mut out) }).unwrap().unwrap();
        assert_eq!(status, Status::Success);
        let slept = block_on(async {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            7
        });
        assert_eq!(slept.unwrap(), 7);
    }

    #[test]
    fn input_must_be_an_object() {
        assert_eq!(parse_input(None).unwrap(), None);
        assert_eq!(parse_input(Some("  ")).unwrap(), None);
        assert_eq!(parse_input(Some(r#"{"a":1}"#)).unwrap().unwrap()["a"], 1);
        assert_eq!(
            parse_input(Some("[1]")).unwrap_err().to_string(),
            "--input must be a JSON object, got an array"
        );
        assert!(parse_input(Some("{")).unwrap_err().to_string().starts_with("--input is not valid JSON"));
    }
}
