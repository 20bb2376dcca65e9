//! `charly check ...`: MCP probes and check plans, on the client in `charly_mcp::{client,
//! check, resolve}`. The commands are synchronous (they also run on the MCP server's blocking
//! pool) and drive the async client on a private current-thread runtime.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use charly::client::{self, parse_duration, parse_header};

use crate::check::{self, Context, Endpoints, Plan, RunOptions};
use crate::probe::{self, MethodOptions, Status};
use crate::resolve::{self, PodmanCli};

use crate::cli::{CheckCmd, Endpoint, McpProbe, PlanTarget, RunArgs};
use crate::commands::{CommandError, Scope};
use crate::project::{PROJECT_FILE, Project};

/// Runs a `charly check` command against the project at `root`.
///
/// # Errors
///
/// [`CommandError::Failed`] (exit status 1) when a call's result is an error, a check failed
/// or a plan has problems (`validate`); [`CommandError::Resolve`], [`CommandError::Client`],
/// [`CommandError::Plan`] or [`CommandError::Usage`] (exit status 2) for an endpoint,
/// connection or plan problem.
pub(super) fn run(
    cmd: &CheckCmd,
    root: &Path,
    scope: Scope,
    out: &mut dyn Write,
) -> Result<(), CommandError> {
    let project = Project::at(root.to_owned());
    // What went wrong when the status is a failure, for `charly: ...` on stderr and the
    // `isError` text over MCP (which prefixes `exit status 1: `).
    const CHECKS_FAILED: &str = "some checks failed";
    let (status, failure) = match cmd {
        CheckCmd::Mcp(probe) => (
            probe_server(probe, root, scope, &project, out)?,
            "the tool's result is an error (isError: true)",
        ),
        CheckCmd::Run(args) => (run_plan(args, root, scope, &project, out)?, CHECKS_FAILED),
        CheckCmd::Live(args) => {
            let plan = load_plan(&project, &args.r#box, scope)?;
            let image = project.resolve_box(&args.r#box).ok().map(|b| b.image);
            let endpoints: Endpoints = resolve::box_endpoints(
                &PodmanCli::default(),
                &args.r#box,
                args.instance.as_deref(),
                image.as_deref(),
            )
            .into();
            let status =
                block(check::live(&plan, &endpoints, args.filter.clone(), client::DEFAULT_TIMEOUT, out))?;
            (status, CHECKS_FAILED)
        }
        CheckCmd::Box(b) => {
            (block(check::run_box(&load_plan(&project, &b.r#box, scope)?, None, out))?, CHECKS_FAILED)
        }
        CheckCmd::Validate(PlanTarget { target }) => {
            (check::validate(&load_plan(&project, target, scope)?, out)?, "the check plan has problems")
        }
    };
    match status {
        Status::Success => Ok(()),
        _ => Err(CommandError::Failed(failure.to_owned())),
    }
}

fn probe_server(
    probe: &McpProbe,
    root: &Path,
    scope: Scope,
    project: &Project,
    out: &mut dyn Write,
) -> Result<Status, CommandError> {
    let endpoint_args = match probe {
        McpProbe::Ping(e)
        | McpProbe::Servers(e)
        | McpProbe::ListTools(e)
        | McpProbe::ListResources(e)
        | McpProbe::ListPrompts(e)
        | McpProbe::Call { endpoint: e, .. }
        | McpProbe::Read { endpoint: e, .. } => e,
    };
    let headers = endpoint_args.header.iter().map(|h| parse_header(h)).collect::<Result<Vec<_>, _>>()?;
    let (endpoints, source) = endpoints(endpoint_args, root, scope, project)?;
    if let McpProbe::Servers(e) = probe {
        return Ok(probe::servers(&endpoints, e.json, out)?);
    }
    let endpoint = resolve::select(
        endpoints,
        endpoint_args.server.as_deref().or(endpoint_args.mcp_name.as_deref()),
        &source.to_string(),
    )
    .map_err(|e| match (e, &source) {
        // The library's hint names --mcp-name, the flag for a box's servers; a .mcp.json's
        // servers are chosen with --server.
        (resolve::ResolveError::Ambiguous { source_name, available }, Source::McpJson(_)) => {
            CommandError::Usage(format!(
                "{source_name} provides several mcp servers ({available}): choose one with --server"
            ))
        }
        (other, _) => other.into(),
    })?
    // `--header` goes to the chosen server whatever named it (after a .mcp.json's own
    // `headers`), not only to `--url`.
    .with_headers(headers);
    let mut options = MethodOptions { json: endpoint_args.json, ..MethodOptions::default() };
    options.connect.timeout = duration(&endpoint_args.timeout)?;
    let status = match probe {
        McpProbe::Ping(_) => block(probe::ping(&endpoint, &options, out))?,
        McpProbe::ListTools(_) => block(probe::list_tools(&endpoint, &options, out))?,
        McpProbe::ListResources(_) => block(probe::list_resources(&endpoint, &options, out))?,
        McpProbe::ListPrompts(_) => block(probe::list_prompts(&endpoint, &options, out))?,
        McpProbe::Call { tool, input, .. } => {
            block(probe::call(&endpoint, tool, input.as_deref(), &options, out))?
        }
        McpProbe::Read { uri, .. } => block(probe::read(&endpoint, uri, &options, out))?,
        McpProbe::Servers(_) => unreachable!("answered above without dialing"),
    };
    Ok(status)
}

/// Where a probe's endpoints came from (named in errors).
enum Source {
    Url,
    Box(String),
    McpJson(PathBuf),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Url => f.write_str("--url"),
            Source::Box(name) => write!(f, "box {name}"),
            Source::McpJson(path) => write!(f, "{}", path.display()),
        }
    }
}

/// The endpoints an [`Endpoint`] names, and where they came from.
fn endpoints(
    args: &Endpoint,
    root: &Path,
    scope: Scope,
    project: &Project,
) -> Result<(Vec<client::Endpoint>, Source), CommandError> {
    if let Some(url) = &args.url {
        return Ok((vec![resolve::from_url(url, args.transport.as_deref(), Vec::new())?], Source::Url));
    }
    if let Some(name) = &args.r#box {
        let image = project.resolve_box(name).ok().map(|b| b.image);
        let found =
            resolve::box_endpoints(&PodmanCli::default(), name, args.instance.as_deref(), image.as_deref())?;
        return Ok((found, Source::Box(name.clone())));
    }
    let path = match &args.mcp_json {
        Some(path) => confine(project, path, scope)?,
        None => root.join(".mcp.json"),
    };
    Ok((resolve::load_mcp_json(&path)?, Source::McpJson(path)))
}

fn run_plan(
    args: &RunArgs,
    root: &Path,
    scope: Scope,
    project: &Project,
    out: &mut dyn Write,
) -> Result<Status, CommandError> {
    let plan = load_plan(project, &args.target, scope)?;
    let context: Context = args.context.parse().map_err(CommandError::Usage)?;
    let endpoints: Endpoints = if let Some(url) = &args.url {
        resolve::from_url(url, args.transport.as_deref(), Vec::new()).map(|e| vec![e]).into()
    } else if let Some(server) = &args.server {
        let path = root.join(".mcp.json");
        resolve::load_mcp_json(&path)
            .and_then(|all| resolve::select(all, Some(server), &path.display().to_string()))
            .map(|e| vec![e])
            .into()
    } else if is_plan_file(root, &args.target) {
        Endpoints::Unavailable(format!("{}: no server for mcp: steps (give --url or --server)", args.target))
    } else {
        let image = project.resolve_box(&args.target).ok().map(|b| b.image);
        resolve::box_endpoints(&PodmanCli::default(), &args.target, None, image.as_deref()).into()
    };
    let options = RunOptions {
        context,
        filter: args.filter.clone(),
        timeout: duration(&args.timeout)?,
        ..Default::default()
    };
    let junit = args.junit.as_ref().map(|j| confine(project, j, scope)).transpose()?;
    block(check::run(&plan, &endpoints, &options, junit.as_deref(), out))
}

/// `path` against the project root; for an MCP call it must stay inside (no absolute path,
/// no `..`, no symlink leading out), as for `box.write`.
fn confine(project: &Project, path: &Path, scope: Scope) -> Result<PathBuf, CommandError> {
    Ok(match scope {
        Scope::Terminal => project.root().join(path),
        Scope::Served => project.resolve_inside(path)?.0,
    })
}

fn is_plan_file(root: &Path, target: &str) -> bool {
    root.join(target).is_file()
}

/// The plan named by `target`: a YAML file (relative to the project directory), or a box's
/// checks (charly.yml and the files of the box's candies).
fn load_plan(project: &Project, target: &str, scope: Scope) -> Result<Plan, CommandError> {
    let root = project.root();
    if is_plan_file(root, target) {
        let path = confine(project, Path::new(target), scope)?;
        return Plan::load(&path)
            .map_err(|e| CommandError::Usage(format!("cannot read plan {}: {e}", path.display())));
    }
    let resolved = project.resolve_box(target)?;
    let mut files = vec![PathBuf::from(PROJECT_FILE)];
    files.extend(resolved.candies.iter().map(|c| Project::candy_file(&c.name)));
    let mut plan = Plan::default();
    for file in files {
        let path = root.join(&file);
        if path.is_file() {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| CommandError::Usage(format!("cannot read {}: {e}", path.display())))?;
            plan.merge(Plan::parse(&text, &file.display().to_string()));
        }
    }
    Ok(plan)
}

fn duration(text: &str) -> Result<Duration, CommandError> {
    parse_duration(text).map_err(|e| CommandError::Usage(format!("--timeout {text:?}: {e}")))
}

/// Drives an async client call to completion on a private current-thread runtime.
fn block<T, E>(future: impl std::future::Future<Output = Result<T, E>>) -> Result<T, CommandError>
where
    CommandError: From<E>,
{
    Ok(probe::block_on(future)??)
}
