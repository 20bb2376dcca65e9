//! `charly mcp serve`: the whole command tree as MCP tools, the project's YAML files as
//! resources, over Streamable HTTP or stdio.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use charly::McpTool;
use charly::server::rmcp::ErrorData as McpError;
use charly::server::rmcp::model::{self as model, ResourceContents};
use charly::server::{
    BearerToken, CliParser, CliRunner, HttpOptions, OAuthOptions, Resource, ResourceList, ResourceTemplate,
    Server, ServerOptions, StdioOptions, ToolError, ToolNameStyle, ToolOutput, cli_tools,
};

use charly::client::{ProgressFn, ProgressUpdate};

use crate::cli::{Cli, ServeArgs};
use crate::commands;
use crate::context::Ctx;
use crate::error::CommandError;
use crate::project::{Project, ProjectSources, RepoCache};
use crate::report::Reply;

/// The HTTP options of `args`: the defaults (loopback Host and Origin values), plus each
/// `--allow-host` as a Host and as http/https Origins on any port.
fn http_options(args: &ServeArgs, listen: std::net::SocketAddr) -> HttpOptions {
    let defaults = HttpOptions::default();
    let mut hosts = defaults.allowed_hosts.clone();
    let mut origins = defaults.allowed_origins.clone();
    for host in &args.allow_host {
        hosts.push(host.clone());
        let name = host
            .rsplit_once(':')
            .filter(|(_, port)| port.parse::<u16>().is_ok())
            .map_or(host.as_str(), |(n, _)| n);
        origins.extend(["http", "https"].map(|scheme| format!("{scheme}://{name}:*")));
    }
    let mut options = defaults
        .listen(listen)
        .path(args.path.clone())
        .allowed_hosts(hosts)
        .allowed_origins(origins)
        .stateless(args.stateless)
        .health_path(args.health_path.clone())
        .max_sessions((args.max_sessions > 0).then_some(args.max_sessions))
        .max_requests_per_session(
            (args.max_requests_per_session > 0).then_some(args.max_requests_per_session),
        )
        .session_idle_timeout(
            (args.session_idle_timeout > 0)
                .then(|| std::time::Duration::from_secs(args.session_idle_timeout)),
        );
    if let Some(replica) = &args.replica {
        options = options.session_id_prefix(replica.clone());
    }
    options
}

/// The OAuth resource server settings of `args` (`--oauth-*`), checked, when `--oauth-issuer`
/// is given.
fn oauth_options(args: &ServeArgs, listen: SocketAddr) -> Result<Option<OAuthOptions>, CommandError> {
    let Some(issuer) = &args.oauth_issuer else { return Ok(None) };
    if args.oauth_resource.is_none() && !listen.ip().is_loopback() {
        return Err(CommandError::Usage(format!(
            "--oauth-issuer: listening on {listen}, give --oauth-resource, the URL clients reach the endpoint at \
             (e.g. https://mcp.example.com{}): access tokens are issued for it",
            args.path
        )));
    }
    let scope = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    let mut options = OAuthOptions::new(issuer)
        .scopes(scope(&args.oauth_read_scope), scope(&args.oauth_write_scope))
        .resource_name("charly");
    if let Some(resource) = &args.oauth_resource {
        options = options.resource(resource.clone());
    }
    if let Some(jwks) = &args.oauth_jwks_uri {
        options = options.jwks_uri(jwks.clone());
    }
    if let Some(ca_file) = &args.oauth_ca_file {
        options = options.ca_file(ca_file.clone());
    }
    options.check().map_err(CommandError::Usage)?;
    Ok(Some(options))
}

/// URI prefix of the project's files as MCP resources.
pub const RESOURCE_PREFIX: &str = "charly://project/";

const INSTRUCTIONS: &str = "charly edits a charly project (charly.yml, box/, candy/): boxes are container \
images, candies are layers. Tools are named by command path, with dots (box.new.project, \
candy.add-rpm) or, for clients that reject dots, with underscores (box_new_project, candy_add-rpm): use \
the spelling your tool list shows. Start with box.list.boxes (box_list_boxes) or box.validate \
(box_validate); read project files as resources under charly://project/.";

/// Whether this binary was built with the `read-only` feature: its catalog has no
/// destructive tool at all, with or without `--read-only`.
pub const READ_ONLY_BUILD: bool = cfg!(feature = "read-only");

/// Said to clients of a read-only server (`--read-only`, or a read-only build), after
/// [`INSTRUCTIONS`]: the tools those name as examples of spelling may not be there.
const READ_ONLY_NOTE: &str = "This server is read-only: tools that change anything (writing files, \
building, starting containers or other servers) are left out, so tools/list is the whole of what it offers.";

/// The warning for an HTTP server that listens beyond loopback without a bearer token (or
/// OAuth access tokens). The Host check stops DNS rebinding from browsers, not a client that
/// sends a loopback `Host` itself: beyond loopback only a token keeps strangers from the tools.
fn exposure_warning(listen: SocketAddr, token: bool, read_only: bool) -> Option<String> {
    (!listen.ip().is_loopback() && !token).then(|| {
        format!(
            "charly: warning: listening on {listen} without a bearer token: anyone who reaches it can call {} \
             (add --token-env VAR, --token-file PATH or --oauth-issuer URL)",
            if read_only { "every read-only tool" } else { "every tool, the writing ones included" }
        )
    })
}

/// The server for the project at `root`: every leaf of [`Cli`] as a tool, each call parsed by
/// clap and run against `root`, so the project is fixed per server and no tool takes it as an
/// input.
pub fn server(root: &Path, read_only: bool) -> Result<Server, crate::project::ProjectError> {
    server_with(root, read_only, ToolNameStyle::Auto)
}

/// [`server`], publishing tool names in `tool_names` (`mcp serve --tool-names`).
pub fn server_with(
    root: &Path,
    read_only: bool,
    tool_names: ToolNameStyle,
) -> Result<Server, crate::project::ProjectError> {
    let catalog = Cli::catalog();
    let run_root = root.to_owned();
    let parser = CliParser::<Cli>::new();
    let runner = CliRunner::blocking("charly", move |argv, cx| {
        let cli = parser.parse(argv)?;
        let progress = cx.progress().is_requested().then(|| {
            let progress = cx.progress().clone();
            Arc::new(move |u: &ProgressUpdate| {
                progress.report_blocking(u.progress, u.total, u.message.clone());
            }) as ProgressFn
        });
        let ctx = Ctx::served(run_root.clone(), cx.cancellation_token().clone(), progress);
        let reply = commands::run(&cli, &ctx).map_err(ToolError::msg)?;
        Ok(tool_output(reply))
    });
    let instructions = match read_only || READ_ONLY_BUILD {
        true => format!("{INSTRUCTIONS} {READ_ONLY_NOTE}"),
        false => INSTRUCTIONS.to_owned(),
    };
    let mut options = ServerOptions::new("charly", env!("CARGO_PKG_VERSION"))
        .instructions(instructions)
        .tools(cli_tools(&catalog, runner))
        .read_only(read_only)
        .tool_names(tool_names);
    let project = Project::at(root.to_owned());
    // Read once here so that a project that cannot be listed stops the server from starting.
    project.yaml_files()?;
    options = options.resource_list(project_files(&project)).resource_template(candy_template(&project));
    Ok(Server::new(options))
}

/// A command's reply as a tool result: the text as `text` content (what the terminal prints)
/// and the JSON as `structuredContent` (what `--json` prints), images as `image` content. A
/// reply that records a failure is an `isError` result whose last text block says
/// `exit status 1 (<why>)`, with its JSON still given.
fn tool_output(reply: Reply) -> ToolOutput {
    use base64::Engine as _;
    // A report whose text is empty (`box.list.checks` of a project without checks, an unset
    // password) gives a client that reads only text nothing to go on: it gets the serialized
    // JSON instead, as MCP's structured content section suggests (2025-06-18, "Structured
    // Content": also return the serialized JSON in a text block).
    let text = match reply.text.trim().is_empty() {
        true => reply.json.to_string(),
        false => reply.text,
    };
    let mut content = vec![model::ContentBlock::text(text)];
    // What a terminal shows on stderr (`charly: warning: ...`), a client reads beside the text.
    content.extend(reply.warnings.iter().map(|w| model::ContentBlock::text(format!("warning: {w}"))));
    for image in &reply.images {
        let data = base64::engine::general_purpose::STANDARD.encode(&image.data);
        content.push(model::ContentBlock::image(data, image.mime.clone()));
    }
    let mut result = match reply.failure {
        Some(why) => {
            content.push(model::ContentBlock::text(format!("exit status 1 ({why})")));
            model::CallToolResult::error(content)
        }
        None => model::CallToolResult::success(content),
    };
    result.structured_content = Some(reply.json);
    ToolOutput::from(result)
}

/// The project's YAML files as resources, listed afresh on every `resources/list` (a candy
/// made over MCP is listed at once, and the server announces `list_changed` after the call
/// that made it). A project that cannot be listed lists nothing.
fn project_files(project: &Project) -> ResourceList {
    let project = project.clone();
    ResourceList::new(move || {
        let files = project.yaml_files().unwrap_or_default();
        let root = project.root();
        files.into_iter().filter(|f| root.join(f).is_file()).map(|f| file_resource(&project, &f)).collect()
    })
}

/// A project file at `charly://project/<relative path>`, read afresh on every request,
/// beneath the root as `box.cat` reads.
fn file_resource(project: &Project, relative: &Path) -> Resource {
    let uri = format!("{RESOURCE_PREFIX}{}", relative.display());
    let model = model::Resource::new(&uri, relative.display().to_string()).with_mime_type("application/yaml");
    let (project, relative) = (project.clone(), relative.to_owned());
    Resource::new(model, move |uri| read_yaml(project.clone(), relative.clone(), uri))
}

/// Candies created while serving: `charly://project/candy/{name}/charly.yml`.
fn candy_template(project: &Project) -> ResourceTemplate {
    let model = model::ResourceTemplate::new(format!("{RESOURCE_PREFIX}candy/{{name}}/charly.yml"), "candy")
        .with_mime_type("application/yaml");
    let read_from = project.clone();
    let candies = project.clone();
    ResourceTemplate::new(model, move |uri, vars| {
        let name = vars.get("name").cloned().unwrap_or_default();
        let project = read_from.clone();
        async move {
            if crate::project::check_name(&name, "candy").is_err() {
                return Err(McpError::invalid_params(format!("no candy named {name:?}"), None));
            }
            read_yaml(project, Project::candy_file(&name), uri).await
        }
    })
    // `completion/complete` of `{name}`: the candies that exist now (beneath the root), sorted.
    .with_completion(move |variable, typed| {
        if variable != "name" {
            return Vec::new();
        }
        let files = candies.yaml_files().unwrap_or_default();
        let mut names: Vec<String> = files
            .iter()
            .filter_map(|f| Some(f.strip_prefix("candy").ok()?.iter().next()?.to_str()?.to_owned()))
            .filter(|name| name.starts_with(typed))
            .collect();
        names.sort();
        names
    })
}

/// Reads `relative` beneath the project root (on the blocking pool: the walk is a few system
/// calls per component), at most [`MAX_CAT_BYTES`](crate::project::MAX_CAT_BYTES) as
/// `box.cat` as a tool: a larger file is refused (invalid params) before it is read, naming
/// its size and the terminal command that prints it (a 5.8 MB file came back whole: trial 30,
/// L3).
async fn read_yaml(
    project: Project,
    relative: PathBuf,
    uri: String,
) -> Result<Vec<ResourceContents>, McpError> {
    let max = crate::project::MAX_CAT_BYTES;
    let read = tokio::task::spawn_blocking(move || project.cat_at_most(&relative, max)).await;
    match read {
        Ok(Ok(file)) => {
            Ok(vec![ResourceContents::text(file.content, uri).with_mime_type("application/yaml")])
        }
        Ok(Err(crate::project::ProjectError::TooLargeToShow { path, size, max })) => {
            Err(McpError::invalid_params(
                format!(
                    "{uri}: {} is {size} bytes; resources/read returns at most {max} bytes (1 MiB): read it \
                     on a terminal with `charly box cat {}`",
                    path.display(),
                    path.display()
                ),
                None,
            ))
        }
        Ok(Err(e)) => Err(McpError::resource_not_found(format!("{uri}: {e}"), None)),
        Err(e) => Err(McpError::internal_error(format!("{uri}: {e}"), None)),
    }
}

/// Ctrl-C (SIGINT) or, on Unix, SIGTERM.
async fn stop_signal() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            result = tokio::signal::ctrl_c() => result,
            _ = term.recv() => Ok(()),
        }
    }
    #[cfg(not(unix))]
    tokio::signal::ctrl_c().await
}

/// The first address `host:port` resolves to (`127.0.0.1:18765`, `localhost:18765`).
fn resolve_listen(listen: &str) -> Result<SocketAddr, CommandError> {
    use std::net::ToSocketAddrs;
    listen.to_socket_addrs().ok().and_then(|mut addrs| addrs.next()).ok_or_else(|| {
        CommandError::Usage(format!("--listen {listen:?} is not a host:port such as 127.0.0.1:18765"))
    })
}

/// Runs `charly mcp serve` until Ctrl-C (HTTP) or until the client closes stdin (stdio).
///
/// The project is `dir` (from `-C/--dir` or `CHARLY_PROJECT_DIR`, used even before it holds
/// a charly.yml), else `--repo`/`CHARLY_PROJECT_REPO` cloned into the cache, else the working
/// directory when it holds a charly.yml, else the embedded sample project (announced on
/// stderr), unless `--no-default-repo`.
pub async fn serve(args: &ServeArgs, dir: Option<PathBuf>) -> Result<(), CommandError> {
    // Line by line, each in one write: stderr is unbuffered, and a line written in pieces
    // interleaves with other writers of the same stream (supervisord's log of the box that
    // runs `charly mcp serve`, issue 14's second trial).
    let mut stderr = std::io::LineWriter::new(std::io::stderr());
    if let Err(why) = charly::server::check_path(&args.path) {
        return Err(CommandError::Usage(format!("--path: {why}")));
    }
    if let Err(why) = charly::server::check_path(&args.health_path) {
        return Err(CommandError::Usage(format!("--health-path: {why}")));
    }
    if args.health_path == args.path {
        return Err(CommandError::Usage(format!(
            "--health-path {:?} is the MCP endpoint's --path; give it another, e.g. /healthz",
            args.health_path
        )));
    }
    if let Some(why) = args.replica.as_deref().and_then(|r| charly::server::check_replica_name(r).err()) {
        return Err(CommandError::Usage(format!("--replica: {why}")));
    }
    let not_a_host = |h: &&String| {
        h.is_empty() || h.contains(|c: char| c.is_whitespace() || c.is_control() || "/*@?#,".contains(c))
    };
    if let Some(host) = args.allow_host.iter().find(not_a_host) {
        return Err(CommandError::Usage(format!(
            "--allow-host {host:?} must be a host name or host:port, e.g. charly.internal or charly.internal:8443"
        )));
    }
    let listen = resolve_listen(&args.listen)?;
    // Read before anything is served, so a missing token stops the server from starting.
    let token = match (&args.token_env, &args.token_file) {
        (Some(var), _) => Some(BearerToken::from_env(var)?),
        (None, Some(path)) => Some(BearerToken::from_file(path)?),
        (None, None) => None,
    };
    let oauth = oauth_options(args, listen)?;
    if let Some(dir) = dir.as_ref().filter(|d| !d.is_dir()) {
        return Err(CommandError::Usage(format!(
            "project directory {} does not exist (create it, or name another with -C/--dir)",
            dir.display()
        )));
    }
    let mut sources = ProjectSources::from_env()?;
    // The embedded sample is written afresh for each server and removed when it stops, so
    // one agent's edits never reach the next.
    let sample = tempfile::Builder::new()
        .prefix("charly-sample-")
        .tempdir()
        .map_err(|e| CommandError::Usage(format!("cannot create a directory for the sample project: {e}")))?;
    sources.sample_dir = sample.path().join("sample");
    sources.dir = dir;
    sources.repo = args.repo.clone();
    sources.no_default_repo = args.no_default_repo;
    let cache = RepoCache::from_env();
    let (project, _origin) = sources.locate(&cache, &mut stderr)?;
    let server = server_with(project.root(), args.read_only, args.tool_names.style())?;
    let tools = server.tools().len();
    if args.stdio {
        tracing::info!(tools, root = %project.root().display(), read_only_build = READ_ONLY_BUILD, "serving over stdio");
        let max = (args.max_requests_per_session > 0).then_some(args.max_requests_per_session);
        server.serve_stdio_with(StdioOptions::default().max_requests_per_session(max)).await?;
        return Ok(());
    }
    if let Some(warning) = exposure_warning(listen, token.is_some() || oauth.is_some(), args.read_only) {
        let _ = writeln!(stderr, "{warning}");
    }
    let mut options = http_options(args, listen);
    if let Some(token) = token {
        options = options.bearer_token(token);
    }
    let issuer = oauth.as_ref().map(|o| o.issuer.clone());
    if let Some(oauth) = oauth {
        options = options.oauth(oauth);
    }
    let resource = options.oauth.as_ref().and_then(|o| o.resource.clone());
    let handle = server.serve_http(options).await?;
    let mode = match (&args.replica, args.stateless) {
        (_, true) => " (stateless)".to_owned(),
        (Some(replica), false) => format!(" (replica {replica})"),
        (None, false) => String::new(),
    };
    let _ = writeln!(
        stderr,
        "charly: serving {tools} tools for {} at {}{}{mode}",
        project.root().display(),
        handle.url(),
        match (READ_ONLY_BUILD, args.read_only) {
            (true, _) => " (read-only build: destructive tools are not compiled in)",
            (false, true) => " (read-only)",
            (false, false) => "",
        }
    );
    if let Some(issuer) = issuer {
        let resource = resource.unwrap_or_else(|| handle.url());
        let _ = writeln!(
            stderr,
            "charly: accepting OAuth access tokens from {issuer} for {resource} (read scope {}, write scope {})",
            or_none(&args.oauth_read_scope),
            or_none(&args.oauth_write_scope)
        );
    }
    stop_signal().await?;
    handle.shutdown().await?;
    Ok(())
}

/// `scope`, or `none` when empty.
fn or_none(scope: &str) -> &str {
    if scope.is_empty() { "none" } else { scope }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client that lists only `_` names must find every tool the instructions name: each
    /// dotted name there comes with its `_` spelling.
    #[test]
    fn the_instructions_name_tools_in_both_spellings() {
        let words: Vec<&str> = INSTRUCTIONS
            .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
            .map(|w| w.trim_end_matches('.'))
            .collect();
        let dotted: Vec<&&str> = words.iter().filter(|w| w.contains('.') && !w.contains(".yml")).collect();
        assert!(dotted.len() >= 4, "{dotted:?}");
        for name in dotted {
            let underscored = name.replace('.', "_");
            assert!(words.contains(&underscored.as_str()), "{name} without {underscored}: {INSTRUCTIONS}");
        }
    }

    #[test]
    fn listening_beyond_loopback_without_a_token_warns() {
        let wildcard: SocketAddr = "0.0.0.0:18765".parse().unwrap();
        let loopback: SocketAddr = "127.0.0.1:18765".parse().unwrap();
        let warning = exposure_warning(wildcard, false, false).unwrap();
        assert!(warning.contains("0.0.0.0:18765 without a bearer token"), "{warning}");
        assert!(warning.contains("the writing ones included"), "{warning}");
        assert!(exposure_warning(wildcard, false, true).unwrap().contains("every read-only tool"));
        assert_eq!(exposure_warning(wildcard, true, false), None);
        assert_eq!(exposure_warning(loopback, false, false), None);
        assert_eq!(exposure_warning("[::1]:1".parse().unwrap(), false, false), None);
    }
}
