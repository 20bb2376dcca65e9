//! The `charly check mcp <method>` commands as plain functions: an endpoint and typed
//! options in, a report (or a [`ClientError`]) out.

use std::fmt;
use std::str::FromStr;

use charly::client::{Client, ClientError, ConnectOptions, Endpoint, connect};
use charly::server::rmcp::model::JsonObject;

use super::report::{Called, Outcome, Pong, PromptList, ReadContents, ResourceList, ServerList, ToolList};

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
    /// `lint` → the tools against what each strict host accepts; a violation → exit status 1.
    Lint,
    /// `list-skills` → `uri\tname\tdescription` (the skills extension).
    ListSkills,
    /// `read-skill` → the skill's files, each checked against its entry.
    ReadSkill,
}

impl Method {
    /// Every method, in the order the allowlist is printed.
    pub const ALL: [Method; 10] = [
        Method::Ping,
        Method::Servers,
        Method::ListTools,
        Method::ListResources,
        Method::ListPrompts,
        Method::Call,
        Method::Read,
        Method::Lint,
        Method::ListSkills,
        Method::ReadSkill,
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
            Method::Lint => "lint",
            Method::ListSkills => "list-skills",
            Method::ReadSkill => "read-skill",
        }
    }

    /// The allowlist as printed in errors: `ping, servers, list-tools, list-resources,
    /// list-prompts, call, read, lint, list-skills, read-skill`.
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
    /// `lint`.
    Lint,
    /// `list-skills`.
    ListSkills,
    /// `read-skill --uri U`.
    ReadSkill {
        /// The URI of the skill's `SKILL.md`.
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

/// `servers`: the endpoints, without dialling any of them.
pub fn servers(endpoints: &[Endpoint]) -> ServerList {
    ServerList::of(endpoints)
}

/// `ping`.
///
/// # Errors
///
/// Connecting or the request failed.
pub async fn ping(endpoint: &Endpoint, options: &ConnectOptions) -> Result<Pong, ClientError> {
    let client = connect(endpoint, options).await?;
    let result = client.ping().await.map(|()| Pong::of(&client));
    client.close().await;
    result
}

/// `list-tools`: every page.
///
/// # Errors
///
/// As [`ping`], plus [`ClientError::Pagination`].
pub async fn list_tools(endpoint: &Endpoint, options: &ConnectOptions) -> Result<ToolList, ClientError> {
    let client = connect(endpoint, options).await?;
    let result = client.list_tools().await;
    client.close().await;
    Ok(ToolList { tools: result? })
}

/// `list-resources`: every page.
///
/// # Errors
///
/// As [`list_tools`].
pub async fn list_resources(
    endpoint: &Endpoint,
    options: &ConnectOptions,
) -> Result<ResourceList, ClientError> {
    let client = connect(endpoint, options).await?;
    let result = client.list_resources().await;
    client.close().await;
    Ok(ResourceList { resources: result? })
}

/// `list-prompts`: every page.
///
/// # Errors
///
/// As [`list_tools`].
pub async fn list_prompts(endpoint: &Endpoint, options: &ConnectOptions) -> Result<PromptList, ClientError> {
    let client = connect(endpoint, options).await?;
    let result = client.list_prompts().await;
    client.close().await;
    Ok(PromptList { prompts: result? })
}

/// `call --tool T [--input JSON]`: the tool's result; it records a failure when the result
/// has `isError: true`.
///
/// # Errors
///
/// As [`ping`].
pub async fn call(
    endpoint: &Endpoint,
    tool: &str,
    input: Option<JsonObject>,
    options: &ConnectOptions,
) -> Result<Called, ClientError> {
    let client = connect(endpoint, options).await?;
    let result = client.call_tool(tool, input).await;
    client.close().await;
    Ok(Called { result: result? })
}

/// `read --uri U`: the resource's contents.
///
/// # Errors
///
/// As [`ping`].
pub async fn read(
    endpoint: &Endpoint,
    uri: &str,
    options: &ConnectOptions,
) -> Result<ReadContents, ClientError> {
    let client = connect(endpoint, options).await?;
    let result = client.read_resource(uri).await;
    client.close().await;
    Ok(result?.into())
}

/// Connects, runs one request and closes the session.
///
/// # Errors
///
/// As [`ping`].
pub async fn run(
    endpoint: &Endpoint,
    request: &Request,
    options: &ConnectOptions,
) -> Result<Outcome, ClientError> {
    let client = connect(endpoint, options).await?;
    let result = run_on(&client, request).await;
    client.close().await;
    result
}

/// Runs one request on an open session.
///
/// # Errors
///
/// The request failed.
pub async fn run_on(client: &Client, request: &Request) -> Result<Outcome, ClientError> {
    Ok(match request {
        Request::Ping => {
            client.ping().await?;
            Outcome::Pong(Pong::of(client))
        }
        Request::ListTools => Outcome::Tools(ToolList { tools: client.list_tools().await? }),
        Request::ListResources => {
            Outcome::Resources(ResourceList { resources: client.list_resources().await? })
        }
        Request::ListPrompts => Outcome::Prompts(PromptList { prompts: client.list_prompts().await? }),
        Request::Call { tool, input } => {
            Outcome::Called(Called { result: client.call_tool(tool, input.clone()).await? })
        }
        Request::Read { uri } => Outcome::Read(client.read_resource(uri).await?.into()),
        Request::Lint => Outcome::Lint(crate::lint::lint_on(client).await?),
        Request::ListSkills => Outcome::Skills(super::SkillList { skills: client.list_skills().await? }),
        Request::ReadSkill { uri } => Outcome::Skill(super::skills::read_skill_on(client, uri).await?),
    })
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
            r#"unknown mcp method "list" (allowed: ping, servers, list-tools, list-resources, list-prompts, call, read, lint, list-skills, read-skill)"#
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
        let list = servers(&[http, stdio]);
        assert_eq!(list.to_string(), "web\thttp://127.0.0.1:1/mcp\tsse\nlocal\tnode s.js\tstdio\n");
        assert_eq!(
            serde_json::to_value(&list).unwrap()["servers"][1],
            serde_json::json!({"name": "local", "command": "node s.js", "transport": "stdio"})
        );
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
