//! The servers `http_bench` measures, as one binary: charly [`Server`]s and bare rmcp 3.11
//! `ServerHandler`s, each with the same 200-tool catalog (`echo0` .. `echo199`, one required
//! string argument) where every tool echoes its `text` argument back.
//!
//! ```text
//! bench_server --charly|--charly-cli|--bare|--bare-validating|--bare-clap --stdio
//! bench_server --charly|--charly-cli|--bare|--bare-validating|--bare-clap --listen 127.0.0.1:0 [--stateless]
//!
//! `--stateless`: no sessions (charly's `HttpOptions::stateless`; bare rmcp's
//! `legacy_session_mode(false)` with `json_response(true)`, its stateless JSON mode).
//! bench_server --cli-call-cost
//! bench_server --output-check-cost
//! ```
//!
//! - `--charly`: 200 hand-written tools (raw JSON Schema, arguments validated with
//!   `jsonschema`). Its bare counterpart doing the same work is `--bare-validating`: the
//!   bare server plus a `jsonschema` check of each call's arguments.
//! - `--charly-cli`: the same 200 tools as CLI leaves of a clap tree, built by the derive and
//!   run in-process (arguments validated by their argv rebuild, then parsed by clap). Its bare
//!   counterpart is `--bare-clap`: the bare server building each call's argv by hand and
//!   parsing it with clap, as an rmcp server wrapping a clap CLI without charly would.
//! - `--bare`: answers each call from its JSON arguments, checking nothing.
//! - `--cli-call-cost`: no server. Times one `echo7` call in-process, without transport or
//!   rmcp, as charly's CLI leaf tool runs it (argv rebuild, `CliParser`, output sink, call
//!   context) and as `--bare-clap` and `--bare` run it, and prints the three costs in
//!   nanoseconds on one line: the share of a call's CPU that the CLI path itself accounts for.
//! - `--output-check-cost`: no server. Times one in-process `echo7` call of a runner returning
//!   a report (`{"text": ...}`), first as a leaf without an output schema, then as one with the
//!   report's output schema, which the server checks each successful result against, and
//!   prints both in nanoseconds on one line: their difference is the check's cost.
//!
//! Over HTTP it prints the bound address as its first stdout line and serves at `/mcp` until
//! stdin closes (so it never outlives the driver). Over stdio it serves until stdin closes.
//! Both spell out the same `tools/list` entries (same schema, same annotations), both set
//! `TCP_NODELAY` on accepted sockets, both page `tools/list` at 100 tools, neither installs a
//! log subscriber.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use axum::serve::ListenerExt as _;
use charly_mcp::Annotations;
use charly_mcp::McpTool as _;
use charly_mcp::server::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, ToolAnnotations,
};
use charly_mcp::server::rmcp::service::RequestContext;
use charly_mcp::server::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use charly_mcp::server::rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService,
};
use charly_mcp::server::rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use charly_mcp::server::{
    CallContext, CliParser, CliRunner, HttpOptions, Server, ServerOptions, Tool, ToolOutput, cli_tools,
};
use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};
use serde_json::{Value, json};
use std::io::Write as _;

use tokio::io::AsyncReadExt as _;

const CATALOG: usize = 200;
const PAGE: usize = 100;

fn schema() -> JsonObject {
    let Value::Object(schema) = json!({
        "type": "object",
        "properties": {"text": {"type": "string", "description": "Text to echo"}},
        "required": ["text"],
        "additionalProperties": false
    }) else {
        unreachable!()
    };
    schema
}

const ANNOTATIONS: Annotations = Annotations {
    read_only_hint: true,
    destructive_hint: false,
    idempotent_hint: false,
    open_world_hint: false,
};

/// The bare rmcp server: the same 200 tools, echo answered directly, pages cut per request.
/// With `validators` (`--bare-validating`) it also checks each call's arguments against the
/// tool's schema with `jsonschema` first, as charly does for hand-written tools.
#[derive(Clone)]
struct Bare {
    tools: Arc<Vec<charly_mcp::server::rmcp::model::Tool>>,
    validators: Option<Arc<Vec<OnceLock<jsonschema::Validator>>>>,
}

impl Bare {
    fn validating() -> Bare {
        Bare { validators: Some(Arc::new((0..CATALOG).map(|_| OnceLock::new()).collect())), ..Bare::new() }
    }

    fn new() -> Bare {
        // One schema object per tool, as in any real catalog (and as the charly side builds).
        let tools = (0..CATALOG)
            .map(|i| {
                let mut tool = charly_mcp::server::rmcp::model::Tool::new(
                    format!("echo{i}"),
                    "Echo the text",
                    Arc::new(schema()),
                );
                let a = ANNOTATIONS;
                tool.annotations = Some(ToolAnnotations::from_raw(
                    None,
                    Some(a.read_only_hint),
                    Some(a.destructive_hint),
                    Some(a.idempotent_hint),
                    Some(a.open_world_hint),
                ));
                tool
            })
            .collect();
        Bare { tools: Arc::new(tools), validators: None }
    }
}

impl ServerHandler for Bare {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let start: usize = request.and_then(|r| r.cursor).and_then(|c| c.parse().ok()).unwrap_or(0);
        let end = (start + PAGE).min(self.tools.len());
        let mut result = ListToolsResult::with_all_items(self.tools[start.min(end)..end].to_vec());
        result.next_cursor = (end < self.tools.len()).then(|| end.to_string());
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(validators) = &self.validators {
            let index = self.tools.iter().position(|t| t.name == request.name);
            let index = index.ok_or_else(|| ErrorData::invalid_params("unknown tool", None))?;
            let validator = validators[index].get_or_init(|| {
                jsonschema::validator_for(&Value::Object((*self.tools[index].input_schema).clone())).unwrap()
            });
            let args = Value::Object(request.arguments.clone().unwrap_or_default());
            if !validator.is_valid(&args) {
                let text = validator.iter_errors(&args).map(|e| e.to_string()).collect::<Vec<_>>().join("; ");
                return Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into());
            }
        }
        let text = request.arguments.and_then(|a| a.get("text").and_then(Value::as_str).map(str::to_owned));
        Ok(CallToolResult::success(vec![ContentBlock::text(text.unwrap_or_default())]).into())
    }
}

/// The bare rmcp server wrapping the clap CLI: it checks that `text` is the one argument and a
/// string, builds the leaf's argv, parses it with clap (one `Command`, built once) and runs the
/// leaf into a buffer.
#[derive(Clone)]
struct BareClap {
    bare: Bare,
    command: Arc<Mutex<clap::Command>>,
}

impl BareClap {
    fn new() -> BareClap {
        BareClap { bare: Bare::new(), command: Arc::new(Mutex::new(BenchCli::command())) }
    }

    fn run(&self, name: &str, arguments: Option<JsonObject>) -> Result<String, String> {
        let arguments = arguments.unwrap_or_default();
        let text = match arguments.get("text") {
            Some(Value::String(text)) if arguments.len() == 1 => text,
            _ => return Err("`text` must be the only argument, a string".to_owned()),
        };
        let cli = {
            let mut command = self.command.lock().unwrap();
            let mut matches =
                command.try_get_matches_from_mut(["bench", name, "--", text]).map_err(|e| e.to_string())?;
            BenchCli::from_arg_matches_mut(&mut matches).map_err(|e| e.to_string())?
        };
        let mut out = Vec::new();
        out.write_all(cli.leaf.text().as_bytes()).map_err(|e| e.to_string())?;
        String::from_utf8(out).map_err(|e| e.to_string())
    }
}

impl ServerHandler for BareClap {
    fn get_info(&self) -> ServerConfig {
        self.bare.get_info()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.bare.list_tools(request, cx).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !self.bare.tools.iter().any(|t| t.name == request.name) {
            return Err(ErrorData::invalid_params("unknown tool", None));
        }
        Ok(match self.run(&request.name, request.arguments) {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(error) => CallToolResult::error(vec![ContentBlock::text(error)]),
        }
        .into())
    }
}

fn charly() -> Server {
    let mut options = ServerOptions::new("bench", "0");
    for i in 0..CATALOG {
        options = options.tool(Tool::new(
            format!("echo{i}"),
            "Echo the text",
            Value::Object(schema()),
            ANNOTATIONS,
            |args, _| async move { Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default())) },
        ));
    }
    Server::new(options)
}

/// The CLI side: `bench echo0 <text>` .. `bench echo199 <text>`, each printing its text.
#[derive(Parser, charly_macros::McpTool)]
#[command(name = "bench")]
#[mcp_tool(crate = "charly_mcp")]
struct BenchCli {
    #[command(subcommand)]
    leaf: Leaf,
}

/// Echo the text
#[derive(clap::Args, Clone, charly_macros::McpTool)]
#[mcp_tool(crate = "charly_mcp")]
struct Echo {
    /// Text to echo
    text: String,
}

macro_rules! leaves {
    ($($leaf:ident)*) => {
        /// One leaf per tool, all alike.
        #[derive(Subcommand, charly_macros::McpTool)]
        #[mcp_tool(crate = "charly_mcp")]
        enum Leaf {
            $(
                /// Echo the text
                $leaf(Echo),
            )*
        }

        impl Leaf {
            fn text(&self) -> &str {
                match self { $(Leaf::$leaf(echo))|* => &echo.text }
            }
        }
    };
}

leaves! {
    Echo0 Echo1 Echo2 Echo3 Echo4 Echo5 Echo6 Echo7 Echo8 Echo9
    Echo10 Echo11 Echo12 Echo13 Echo14 Echo15 Echo16 Echo17 Echo18 Echo19
    Echo20 Echo21 Echo22 Echo23 Echo24 Echo25 Echo26 Echo27 Echo28 Echo29
    Echo30 Echo31 Echo32 Echo33 Echo34 Echo35 Echo36 Echo37 Echo38 Echo39
    Echo40 Echo41 Echo42 Echo43 Echo44 Echo45 Echo46 Echo47 Echo48 Echo49
    Echo50 Echo51 Echo52 Echo53 Echo54 Echo55 Echo56 Echo57 Echo58 Echo59
    Echo60 Echo61 Echo62 Echo63 Echo64 Echo65 Echo66 Echo67 Echo68 Echo69
    Echo70 Echo71 Echo72 Echo73 Echo74 Echo75 Echo76 Echo77 Echo78 Echo79
    Echo80 Echo81 Echo82 Echo83 Echo84 Echo85 Echo86 Echo87 Echo88 Echo89
    Echo90 Echo91 Echo92 Echo93 Echo94 Echo95 Echo96 Echo97 Echo98 Echo99
    Echo100 Echo101 Echo102 Echo103 Echo104 Echo105 Echo106 Echo107 Echo108 Echo109
    Echo110 Echo111 Echo112 Echo113 Echo114 Echo115 Echo116 Echo117 Echo118 Echo119
    Echo120 Echo121 Echo122 Echo123 Echo124 Echo125 Echo126 Echo127 Echo128 Echo129
    Echo130 Echo131 Echo132 Echo133 Echo134 Echo135 Echo136 Echo137 Echo138 Echo139
    Echo140 Echo141 Echo142 Echo143 Echo144 Echo145 Echo146 Echo147 Echo148 Echo149
    Echo150 Echo151 Echo152 Echo153 Echo154 Echo155 Echo156 Echo157 Echo158 Echo159
    Echo160 Echo161 Echo162 Echo163 Echo164 Echo165 Echo166 Echo167 Echo168 Echo169
    Echo170 Echo171 Echo172 Echo173 Echo174 Echo175 Echo176 Echo177 Echo178 Echo179
    Echo180 Echo181 Echo182 Echo183 Echo184 Echo185 Echo186 Echo187 Echo188 Echo189
    Echo190 Echo191 Echo192 Echo193 Echo194 Echo195 Echo196 Echo197 Echo198 Echo199
}

fn charly_cli() -> Server {
    let mut options = ServerOptions::new("bench", "0");
    for tool in charly_cli_tools() {
        options = options.tool(tool);
    }
    Server::new(options)
}

/// The CLI leaves of `BenchCli` as tools, run in-process by an async runner.
fn charly_cli_tools() -> Vec<Tool> {
    let parser = Arc::new(CliParser::<BenchCli>::new());
    let runner = CliRunner::future("bench", move |argv, cx| {
        let parsed = parser.parse(argv);
        async move {
            let cli = parsed?;
            cx.out().write_all(cli.leaf.text().as_bytes())?;
            Ok(())
        }
    });
    cli_tools(&BenchCli::catalog(), runner)
}

/// `--cli-call-cost`: the fastest of 5 rounds of 100,000 in-process `echo7` calls each, in ns
/// per call, for charly's CLI leaf, `BareClap::run` and the bare echo, printed on one line.
async fn cli_call_cost() {
    const CALLS: u32 = 100_000;
    let tools = charly_cli_tools();
    let tool = tools.iter().find(|t| t.name() == "echo7").expect("echo7 is a leaf");
    let clap = BareClap::new();
    let args = json!({ "text": "hello" }).as_object().cloned().expect("an object");
    let mut best = [f64::MAX; 3];
    for _ in 0..5 {
        let start = Instant::now();
        for _ in 0..CALLS {
            let cx = CallContext::detached("echo7", JsonObject::new());
            std::hint::black_box(tool.call(args.clone(), cx).await.expect("echo7 succeeds"));
        }
        best[0] = best[0].min(start.elapsed().as_nanos() as f64 / f64::from(CALLS));
        let start = Instant::now();
        for _ in 0..CALLS {
            std::hint::black_box(clap.run("echo7", Some(args.clone())).expect("echo7 succeeds"));
        }
        best[1] = best[1].min(start.elapsed().as_nanos() as f64 / f64::from(CALLS));
        let start = Instant::now();
        for _ in 0..CALLS {
            let args = std::hint::black_box(args.clone());
            std::hint::black_box(args.get("text").and_then(Value::as_str).map(str::to_owned));
        }
        best[2] = best[2].min(start.elapsed().as_nanos() as f64 / f64::from(CALLS));
    }
    println!("{:.0} {:.0} {:.0}", best[0], best[1], best[2]);
}

/// The report of `--output-check-cost`'s runner.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct EchoReport {
    /// The text echoed
    text: String,
}

impl std::fmt::Display for EchoReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// `--output-check-cost`: the fastest of 5 rounds of 100,000 in-process `echo7` calls each, in
/// ns per call, of a leaf returning an `EchoReport` without, then with, its output schema.
async fn output_check_cost() {
    const CALLS: u32 = 100_000;
    let parser = Arc::new(CliParser::<BenchCli>::new());
    let runner = CliRunner::future("bench", move |argv, _cx| {
        let parsed = parser.parse(argv);
        async move { ToolOutput::report(&EchoReport { text: parsed?.leaf.text().to_owned() }) }
    });
    let tools = cli_tools(&BenchCli::catalog(), runner);
    let plain = tools.iter().find(|t| t.name() == "echo7").expect("echo7 is a leaf").clone();
    let checked = plain.clone().with_output_schema(charly_mcp::schema::output_schema::<EchoReport>());
    let args = json!({ "text": "hello" }).as_object().cloned().expect("an object");
    let mut best = [f64::MAX; 2];
    for _ in 0..5 {
        for (tool, best) in [&plain, &checked].into_iter().zip(&mut best) {
            let start = Instant::now();
            for _ in 0..CALLS {
                let cx = CallContext::detached("echo7", JsonObject::new());
                let output = tool.call(args.clone(), cx).await.expect("echo7 succeeds");
                assert!(output.structured_content().is_some(), "echo7 passes its output check");
                std::hint::black_box(output);
            }
            *best = best.min(start.elapsed().as_nanos() as f64 / f64::from(CALLS));
        }
    }
    println!("{:.0} {:.0}", best[0], best[1]);
}

/// Resolves once stdin reaches end of file (the driver exited or closed it).
async fn stdin_closed() {
    let mut stdin = tokio::io::stdin();
    let mut buf = [0u8; 256];
    while let Ok(n) = stdin.read(&mut buf).await {
        if n == 0 {
            break;
        }
    }
}

/// The server a run serves, built before the transport starts (as each would be in real use).
enum Which {
    Bare(Bare),
    BareClap(BareClap),
    Charly(Server),
}

async fn serve_bare_stdio<H: ServerHandler>(handler: H) {
    let running = handler.serve(charly_mcp::server::rmcp::transport::stdio()).await.unwrap();
    let _ = running.waiting().await;
}

/// Serves `handler` as bare rmcp does over Streamable HTTP (plus `TCP_NODELAY`), at `/mcp`.
/// `stateless`: rmcp's stateless mode with its `json_response` (plain JSON answers).
async fn serve_bare_http<H: ServerHandler + Clone>(
    handler: H,
    addr: SocketAddr,
    stateless: bool,
) -> SocketAddr {
    let mut config = StreamableHttpServerConfig::default();
    if stateless {
        config = config.with_legacy_session_mode(false).with_json_response(true);
    }
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let local = listener.local_addr().unwrap();
    let router = axum::Router::new().route_service("/mcp", service);
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(listener, router).await });
    local
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: bench_server --charly|--charly-cli|--bare|--bare-validating|--bare-clap --stdio|--listen ADDR [--stateless], or bench_server --cli-call-cost|--output-check-cost";
    if args.first().map(String::as_str) == Some("--cli-call-cost") {
        return cli_call_cost().await;
    }
    if args.first().map(String::as_str) == Some("--output-check-cost") {
        return output_check_cost().await;
    }
    let which = match args.first().map(String::as_str) {
        Some("--bare") => Which::Bare(Bare::new()),
        Some("--bare-validating") => Which::Bare(Bare::validating()),
        Some("--bare-clap") => Which::BareClap(BareClap::new()),
        Some("--charly") => Which::Charly(charly()),
        Some("--charly-cli") => Which::Charly(charly_cli()),
        _ => panic!("{usage}"),
    };
    match (args.get(1).map(String::as_str), args.get(2)) {
        (Some("--stdio"), _) => match which {
            Which::Bare(bare) => serve_bare_stdio(bare).await,
            Which::BareClap(bare) => serve_bare_stdio(bare).await,
            Which::Charly(charly) => charly.serve_stdio().await.unwrap(),
        },
        (Some("--listen"), Some(addr)) => {
            let addr: SocketAddr = addr.parse().expect("--listen takes ip:port");
            let stateless = args.get(3).map(String::as_str) == Some("--stateless");
            let local = match which {
                Which::Bare(bare) => serve_bare_http(bare, addr, stateless).await,
                Which::BareClap(bare) => serve_bare_http(bare, addr, stateless).await,
                Which::Charly(charly) => {
                    let options = HttpOptions::default().listen(addr).stateless(stateless);
                    let handle = charly.serve_http(options).await.unwrap();
                    let local = handle.local_addr();
                    std::mem::forget(handle); // serves until the process exits
                    local
                }
            };
            println!("{local}");
            stdin_closed().await;
        }
        _ => panic!("{usage}"),
    }
}
