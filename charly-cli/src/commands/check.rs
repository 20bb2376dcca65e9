//! `charly check ...`: MCP probes and check plans. The commands are synchronous (they also run
//! on the MCP server's blocking pool) and drive the async client through [`Ctx::block`].

use std::path::{Path, PathBuf};

use charly::client::{self, ConnectOptions, parse_header};

use super::reply;
use crate::check::{self, Endpoints, Plan, RunOptions};
use crate::cli::{AnswerArgs, CheckCmd, Endpoint, McpProbe, PlanTarget, RemoteArgs, RunArgs};
use crate::context::{Ctx, Scope};
use crate::error::CommandError;
use crate::probe;
use crate::project::{Missing, Project, ProjectError};
use crate::report::Reply;
use crate::resolve::{self, PodmanCli};

/// Runs a `charly check` command.
///
/// # Errors
///
/// [`CommandError::Resolve`], [`CommandError::Client`], [`CommandError::Plan`] or
/// [`CommandError::Usage`] for an endpoint, connection or plan problem. A failed check, an
/// invalid plan (`validate`) or a probed tool's `isError` are reports that record a failure.
pub(super) fn run(cmd: &CheckCmd, ctx: &Ctx) -> Result<Reply, CommandError> {
    let project = Project::at(ctx.root().to_owned()).with_cancel(ctx.cancel());
    match cmd {
        CheckCmd::Mcp(probe) => probe_server(probe, ctx, &project),
        CheckCmd::Cdp(cmd) => super::cdp::run(cmd, ctx),
        CheckCmd::Dbus(cmd) => super::dbus::run(cmd, ctx),
        CheckCmd::Vnc(cmd) => super::vnc::run(cmd, ctx),
        CheckCmd::Wl(cmd) => super::wl::run(cmd, ctx),
        CheckCmd::Run(args) => reply(run_plan(args, ctx, &project)?),
        CheckCmd::Live(args) => reply(super::live::live(args, ctx, &project)?),
        CheckCmd::Box(args) => reply(super::live::check_box(args, ctx, &project)?),
        CheckCmd::Validate(PlanTarget { target }) => {
            reply(check::validate(&load_plan(&project, target, ctx.scope())?))
        }
    }
}

fn probe_server(probe: &McpProbe, ctx: &Ctx, project: &Project) -> Result<Reply, CommandError> {
    let endpoint_args = match probe {
        McpProbe::Logout { url, server } => return logout(url.as_deref(), server.as_deref(), ctx, project),
        McpProbe::Ping(e)
        | McpProbe::Servers(e)
        | McpProbe::ListTools(e)
        | McpProbe::ListResources(e)
        | McpProbe::ListPrompts(e)
        | McpProbe::ListSkills(e)
        | McpProbe::ReadSkill { endpoint: e, .. }
        | McpProbe::Lint { endpoint: e, .. }
        | McpProbe::Call { endpoint: e, .. }
        | McpProbe::Read { endpoint: e, .. } => e,
    };
    let headers = endpoint_args.header.iter().map(|h| parse_header(h)).collect::<Result<Vec<_>, _>>()?;
    let listing = matches!(probe, McpProbe::Servers(_));
    let (endpoints, source) = endpoints(endpoint_args, ctx, project, listing)?;
    if let McpProbe::Servers(_) = probe {
        return reply(probe::servers(&endpoints));
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
    let answers = match probe {
        McpProbe::Call { answers, .. } | McpProbe::Read { answers, .. } => answers_of(answers)?,
        _ => client::Answers::default(),
    };
    let login = match (&endpoint_args.url, &endpoint_args.server, &endpoint_args.r#box) {
        (Some(url), _, _) => format!("--url {}", client::redacted(url)),
        (None, Some(server), _) => format!("--server {server}"),
        (None, None, Some(name)) => name.clone(),
        (None, None, None) => String::new(),
    };
    let (tls, oauth) = remote_options(&endpoint_args.remote, ctx, &login)?;
    let options = ConnectOptions {
        timeout: endpoint_args.timeout.into(),
        progress: ctx.progress_fn(),
        answers,
        protocol: protocol_of(&endpoint_args.protocol),
        // Ctrl-C (or an MCP call's cancellation) cancels a task the call follows on the server.
        interrupt: Some(ctx.cancel_token()),
        tls,
        oauth,
        ..ConnectOptions::default()
    };
    let e = &endpoint;
    match probe {
        McpProbe::Ping(_) => reply(ctx.block_until_interrupted(probe::ping(e, &options))?),
        McpProbe::ListTools(_) => reply(ctx.block_until_interrupted(probe::list_tools(e, &options))?),
        McpProbe::ListResources(_) => reply(ctx.block_until_interrupted(probe::list_resources(e, &options))?),
        McpProbe::ListPrompts(_) => reply(ctx.block_until_interrupted(probe::list_prompts(e, &options))?),
        McpProbe::Call { tool, input, .. } => {
            let shown =
                input.as_deref().map_or("JSON", |arg| if arg.starts_with('@') { arg } else { "JSON" });
            let input = probe::parse_input(input_text(input.as_deref(), ctx, project)?.as_deref())?;
            probe::check_call_size(tool, input.as_ref(), shown)?;
            reply(ctx.block_interruptible(probe::call(e, tool, input, &options))?)
        }
        McpProbe::Read { uri, .. } => reply(ctx.block_interruptible(probe::read(e, uri, &options))?),
        McpProbe::ListSkills(_) => reply(ctx.block_until_interrupted(probe::list_skills(e, &options))?),
        McpProbe::ReadSkill { uri, .. } => {
            reply(ctx.block_until_interrupted(probe::read_skill(e, uri, &options))?)
        }
        McpProbe::Lint { client_name, .. } => {
            let options = ConnectOptions { client_name: client_name.clone(), ..options };
            reply(ctx.block_until_interrupted(crate::lint::lint(e, &options))?)
        }
        McpProbe::Servers(_) => unreachable!("answered above without dialing"),
        McpProbe::Logout { .. } => unreachable!("answered above without dialing"),
    }
}

/// `check mcp logout --url URL | --server NAME`: the server's cached OAuth login forgotten
/// ([`crate::credentials::oauth::logout`]); `--server` names a server of the project's
/// `.mcp.json` (as `check mcp ping --server` does), whose URL is the login's. The KDBX password
/// may be asked on a terminal.
fn logout(
    url: Option<&str>,
    server: Option<&str>,
    ctx: &Ctx,
    project: &Project,
) -> Result<Reply, CommandError> {
    use std::io::IsTerminal as _;
    let url = match (url, server) {
        (Some(url), _) => url.to_owned(),
        (None, Some(name)) => {
            let (all, path) = load_mcp_json(project, Path::new(".mcp.json"), ctx.scope(), Some(name))?;
            let endpoint = resolve::select(all, Some(name), &path.display().to_string())?;
            match endpoint.target {
                client::Target::Http { url, .. } => url,
                _ => {
                    return Err(CommandError::Usage(format!(
                        "check mcp logout --server {name}: {name} is a stdio server in {}, which has no \
                         OAuth login (logins are kept for http and https servers)",
                        path.display()
                    )));
                }
            }
        }
        (None, None) => {
            return Err(CommandError::Usage(match ctx.scope() {
                Scope::Terminal => "check mcp logout: give --url URL or --server NAME".into(),
                Scope::Served => {
                    "check.mcp.logout: give url (the server's URL) or server (a name in .mcp.json)".into()
                }
            }));
        }
    };
    // Named as the caller gives them: flags on a terminal, arguments in a tool call.
    let (leaf, flag) = match ctx.scope() {
        Scope::Terminal => ("check mcp logout", "--url"),
        Scope::Served => ("check.mcp.logout", "url"),
    };
    let terminal = ctx.scope() == Scope::Terminal && std::io::stdin().is_terminal();
    let done = crate::credentials::oauth::logout(ctx.root().to_owned(), &url, flag, terminal)
        .map_err(|e| CommandError::Usage(format!("{leaf}: {e}")))?;
    reply(done)
}

/// The TLS and OAuth options of `--ca-file`, `--insecure`, `--no-oauth` and `--oauth-*`; `login`
/// names the server in the hint of an unattended run that needs a person (`--url URL`).
/// `--insecure` says so on stderr. A terminal run (stdin and stderr terminals) logs in through
/// the browser; any other run only where the authorization server redirects on its own. Tokens
/// are kept in the credential store ([`crate::credentials::oauth`]).
///
/// # Errors
///
/// [`CommandError::Usage`] for an `--oauth-client-secret-env` variable that is not set.
pub(crate) fn remote_options(
    remote: &RemoteArgs,
    ctx: &Ctx,
    login: &str,
) -> Result<(client::TlsOptions, client::OAuthOptions), CommandError> {
    use std::io::IsTerminal as _;
    if remote.insecure {
        eprintln!("{}", client::TlsOptions::INSECURE_WARNING);
    }
    // A served call's paths are the project's; a terminal's are the shell's.
    let ca_file = remote.ca_file.as_ref().map(|path| match ctx.scope() {
        Scope::Terminal => path.clone(),
        Scope::Served => ctx.root().join(path),
    });
    let tls = client::TlsOptions::new(ca_file, remote.insecure);
    let client_secret = match &remote.oauth_client_secret_env {
        Some(var) => Some(std::env::var(var).ok().filter(|v| !v.is_empty()).ok_or_else(|| {
            CommandError::Usage(format!(
                "--oauth-client-secret-env {var}: the variable is not set (it should hold the secret of \
                 --oauth-client-id)"
            ))
        })?),
        None => None,
    };
    // A client ID metadata document is an https URL (SEP-991): refused before any request.
    if let Some(url) = &remote.oauth_client_metadata_url
        && url::Url::parse(url).map(|u| u.scheme() != "https" || u.host().is_none()).unwrap_or(true)
    {
        return Err(CommandError::Usage(format!(
            "--oauth-client-metadata-url {url:?}: a client ID metadata document is an https:// URL (its URL \
             is the client id), e.g. https://app.example.com/oauth/client.json"
        )));
    }
    let terminal =
        ctx.scope() == Scope::Terminal && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let interaction = if terminal { client::Interaction::Terminal } else { client::Interaction::Unattended };
    let login_hint = format!(
        "log in once on a terminal (`charly check mcp ping {login}`); the token is then kept in the \
         credential store"
    );
    let oauth = client::OAuthOptions {
        enabled: !remote.no_oauth,
        interaction,
        client_id: remote.oauth_client_id.clone(),
        client_secret,
        client_metadata_url: remote.oauth_client_metadata_url.clone(),
        scopes: remote.oauth_scope.clone(),
        cache: Some(std::sync::Arc::new(crate::credentials::oauth::OAuthTokens::new(
            ctx.root().to_owned(),
            terminal,
        ))),
        login_hint: Some(login_hint),
        ..client::OAuthOptions::default()
    };
    Ok((tls, oauth))
}

/// The JSON text `--input` names ([`probe::InputSource`]): inline, `@FILE` or `@-`, at most
/// [`probe::MAX_INPUT_BYTES`]. From a terminal `@FILE` is a path as the shell means it and `@-`
/// reads stdin; for an MCP call `@FILE` is read beneath the project root (no absolute path, no
/// `..`, no symlink leading out), like the other paths a served call names, and `@-` is
/// refused: a stdio server's stdin is the protocol stream.
fn input_text(input: Option<&str>, ctx: &Ctx, project: &Project) -> Result<Option<String>, CommandError> {
    let Some(arg) = input else { return Ok(None) };
    let text = match (probe::InputSource::of(arg), ctx.scope()) {
        (probe::InputSource::Inline(text), _) if text.len() > probe::MAX_INPUT_BYTES => {
            return Err(probe::too_large("JSON").into());
        }
        (probe::InputSource::Inline(text), _) => text.to_owned(),
        (probe::InputSource::Stdin, Scope::Terminal) => probe::read_capped(std::io::stdin().lock(), "@-")?,
        (probe::InputSource::Stdin, Scope::Served) => {
            return Err(CommandError::Usage(
                "--input @- reads standard input, which for an MCP call is the protocol stream (over \
                 stdio): give the arguments inline, or as @FILE, a file inside the project root"
                    .into(),
            ));
        }
        (probe::InputSource::File(path), Scope::Terminal) => {
            let file = std::fs::File::open(path).map_err(|e| {
                CommandError::Usage(format!("--input @{}: cannot read it: {e}", path.display()))
            })?;
            probe::read_capped(file, arg)?
        }
        (probe::InputSource::File(path), Scope::Served) => {
            let (file, _) = project
                .open_inside(path)
                .map_err(|e| CommandError::Usage(format!("--input @{}: {e}", path.display())))?;
            probe::read_capped(file, arg)?
        }
    };
    Ok(Some(text))
}

/// `--elicit`, `--sample`, `--root` as the client's answers.
fn answers_of(args: &AnswerArgs) -> Result<client::Answers, CommandError> {
    let mut answers = client::Answers::default();
    for field in &args.elicit {
        answers = answers.elicit(field)?;
    }
    answers.sample = args.sample.clone();
    answers.roots = args.root.clone();
    Ok(answers)
}

/// `--protocol` (clap checked the spelling). `--transport sse` with `--protocol 2026-07-28`
/// is refused by [`client::connect`]: that revision has no HTTP+SSE transport.
fn protocol_of(protocol: &str) -> client::Protocol {
    match protocol {
        "2026-07-28" => client::Protocol::Stateless,
        "2025-11-25" => client::Protocol::Initialize,
        _ => client::Protocol::Latest,
    }
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

/// The endpoints an [`Endpoint`] names, and where they came from. `listing` (`servers`, which
/// dials none): an entry of `.mcp.json` whose `${VAR}` is unset is listed as written, not an
/// error (trial finding: one such entry failed the whole list).
fn endpoints(
    args: &Endpoint,
    ctx: &Ctx,
    project: &Project,
    listing: bool,
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
    let relative = match args.mcp_json.as_deref() {
        Some(relative) => relative,
        None if !project.root().join(".mcp.json").exists() => {
            return Err(CommandError::Usage(
                "no .mcp.json in the project directory: name the server with a BOX, --url URL, or \
                 --mcp-json PATH (as a tool: `box`, `url` or `mcp_json`)"
                    .into(),
            ));
        }
        None => Path::new(".mcp.json"),
    };
    // An empty name matches no entry: every entry's unset variable stays as written.
    let wanted = if listing { Some(args.server.as_deref().unwrap_or("")) } else { args.server.as_deref() };
    let (found, path) = load_mcp_json(project, relative, ctx.scope(), wanted)?;
    Ok((found, Source::McpJson(path)))
}

/// The `.mcp.json` at `relative` and where it is. For an MCP call it is read beneath the root
/// (no absolute path, no `..`, no symlink leading out), with the errors
/// [`resolve::load_mcp_json`] gives.
fn load_mcp_json(
    project: &Project,
    relative: &Path,
    scope: Scope,
    wanted: Option<&str>,
) -> Result<(Vec<client::Endpoint>, PathBuf), resolve::ResolveError> {
    let shown = project.root().join(relative);
    if scope == Scope::Terminal {
        return Ok((resolve::load_mcp_json_for(&shown, wanted)?, shown));
    }
    let file = project.cat(relative).map_err(|e| {
        let message = match e {
            ProjectError::Io { source, .. } => source.to_string(),
            other => other.to_string(),
        };
        resolve::ResolveError::Io { what: shown.display().to_string(), message }
    })?;
    // Relative commands in it are relative to where it is.
    let path = project.root().join(&file.path);
    let found = match wanted {
        Some(wanted) => resolve::parse_mcp_json_for(&file.content, path.parent(), wanted),
        None => resolve::parse_mcp_json(&file.content, path.parent()),
    };
    let found = found.map_err(|e| match e {
        resolve::ResolveError::McpJson(m) => {
            resolve::ResolveError::McpJson(format!("{}: {m}", path.display()))
        }
        other => other,
    })?;
    Ok((found, path))
}

fn run_plan(args: &RunArgs, ctx: &Ctx, project: &Project) -> Result<check::Report, CommandError> {
    let root = ctx.root();
    let plan = load_plan(project, &args.target, ctx.scope())?;
    let endpoints: Endpoints = if let Some(url) = &args.url {
        resolve::from_url(url, args.transport.as_deref(), Vec::new()).map(|e| vec![e]).into()
    } else if let Some(server) = &args.server {
        load_mcp_json(project, Path::new(".mcp.json"), ctx.scope(), Some(server))
            .and_then(|(all, path)| resolve::select(all, Some(server), &path.display().to_string()))
            .map(|e| vec![e])
            .into()
    } else if is_plan_file(root, &args.target) {
        Endpoints::Unavailable(format!("{}: no server for mcp: steps (give --url or --server)", args.target))
    } else {
        let image = project.resolve_box(&args.target).ok().map(|b| b.image);
        resolve::box_endpoints(&PodmanCli::default(), &args.target, None, image.as_deref()).into()
    };
    let headers = args.header.iter().map(|h| parse_header(h)).collect::<Result<Vec<_>, _>>()?;
    let endpoints = match endpoints {
        Endpoints::Resolved(list) => {
            Endpoints::Resolved(list.into_iter().map(|e| e.with_headers(headers.clone())).collect())
        }
        other => other,
    };
    let login = match (&args.url, &args.server) {
        (Some(url), _) => format!("--url {}", client::redacted(url)),
        (None, Some(server)) => format!("--server {server}"),
        (None, None) => args.target.clone(),
    };
    let (tls, oauth) = remote_options(&args.remote, ctx, &login)?;
    // A plan runs unattended: it never waits for a person at a browser.
    let oauth = client::OAuthOptions { interaction: client::Interaction::Unattended, ..oauth };
    let options = RunOptions {
        context: args.context,
        filter: args.filter.clone(),
        timeout: args.timeout.into(),
        tls,
        oauth,
        root: Some(ctx.root().to_owned()),
        confined: ctx.scope() == Scope::Served,
        box_not_live: (!is_plan_file(root, &args.target)).then(|| args.target.clone()),
        venue: if is_plan_file(root, &args.target) {
            check::Venue::default()
        } else {
            check::Venue::Unavailable(format!(
                "`charly check run {b}` runs no step in box {b}'s container (only its mcp: steps): run `charly \
                 check live {b}`",
                b = args.target
            ))
        },
        ..Default::default()
    };
    match (&args.junit, ctx.scope()) {
        (None, _) => ctx.block(check::run(&plan, &endpoints, &options, None)),
        (Some(junit), Scope::Terminal) => {
            let path = root.join(junit);
            crate::project::refuse_git_path(&path).map_err(super::named("junit"))?;
            ctx.block(check::run(&plan, &endpoints, &options, Some(&path)))
        }
        // For an MCP call the report is written beneath the root (no absolute path, no `..`, no
        // symlink leading out, even one made while the plan ran), atomically, into a directory
        // that exists, as a terminal run requires too.
        (Some(junit), Scope::Served) => {
            super::live::junit_replaceable(project, junit)?;
            let report = ctx.block(check::run(&plan, &endpoints, &options, None))?;
            let mut xml = Vec::new();
            check::write_junit(&report, &mut xml)?;
            super::live::served_junit(project, junit, &xml, Missing::Fail)?;
            Ok(report)
        }
    }
}

fn is_plan_file(root: &Path, target: &str) -> bool {
    root.join(target).is_file()
}

/// The plan named by `target`: a YAML file (relative to the project directory), or a box's
/// checks (charly.yml and the files of the box's candies).
fn load_plan(project: &Project, target: &str, scope: Scope) -> Result<Plan, CommandError> {
    let root = project.root();
    if is_plan_file(root, target) {
        let text = match scope {
            Scope::Terminal => {
                let path = root.join(target);
                std::fs::read_to_string(&path)
                    .map_err(|e| CommandError::Usage(format!("cannot read plan {}: {e}", path.display())))?
            }
            // Read beneath the root, whatever happened to the name since it was checked.
            Scope::Served => project.cat(Path::new(target)).map_err(super::named("target"))?.content,
        };
        // Named as given, relative to the project: results and problems never show where the
        // project lives on the server's disk.
        return Ok(Plan::parse_file(&text, target));
    }
    // The box must exist; a name that looks like a file was meant as one.
    project.resolve_box(target).map_err(|e| {
        // `plans/web.yml` or `web.yaml` was meant as a file: say that it is missing.
        let file_like = target.contains('/') || target.ends_with(".yml") || target.ends_with(".yaml");
        match e {
            ProjectError::NoSuchBox { .. } if file_like => CommandError::Usage(format!(
                "no plan file {target} in the project directory (a target is a plan file there, or a box \
                 name)"
            )),
            e => e.into(),
        }
    })?;
    let plan = super::live::box_sections(project, target)?;
    Ok(plan)
}
