//! CLI leaves as tools: a [`Catalog`] plus a [`CliRunner`] that executes an argv in-process.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{CallToolResult, ContentBlock};

use super::context::CallContext;
use super::error::ToolError;
use super::tool::{Handler, Tool, ToolOutput};
use crate::catalog::{Catalog, CliTool};
use crate::quote::{long_strings, shorten_in};

type BlockingFn = dyn Fn(Vec<String>, &CallContext) -> Result<ToolOutput, ToolError> + Send + Sync;
type AsyncFn = dyn Fn(Vec<String>, CallContext) -> Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send>>
    + Send
    + Sync;

#[derive(Clone)]
enum Kind {
    Blocking(Arc<BlockingFn>),
    Async(Arc<AsyncFn>),
}

/// Executes one CLI command in-process, given its full argv.
///
/// The argv starts with the program name given here, then what [`CliTool::argv`] rebuilt
/// from the JSON arguments (command path, `--long=value` flags, `--`, positionals), so the
/// runner can hand it straight to `Cli::try_parse_from`.
///
/// The runner returns `Ok(R)` for any `R: Into<`[`ToolOutput`]`>`: `()` when everything the
/// command had to say went to [`CallContext::out`] (never to stdout), or a
/// [`ToolOutput::report`] of the command's typed report (text plus `structuredContent`,
/// matching the leaf's `#[mcp_tool(output = Report)]` schema), images included. The result
/// is the text written to [`CallContext::out`] as one text block (left out when empty, unless
/// the runner returned no content at all), then the returned output's content blocks, with
/// its `structuredContent` and `isError`. A `clap::Error` converts into [`ToolError::Clap`]
/// with clap's rendered message; any returned error or panic becomes an `isError` result,
/// with the output written so far placed before the error text.
///
/// ```
/// use std::io::Write;
/// use charly_mcp::server::{CliRunner, ToolOutput};
///
/// let runner = CliRunner::blocking("mycli", |argv, cx| {
///     writeln!(cx.out(), "would run {argv:?}")?;
///     Ok(())
/// });
/// let reporting = CliRunner::blocking("mycli", |argv, _cx| {
///     let json = serde_json::json!({"argc": argv.len()});
///     Ok(ToolOutput::structured(format!("{} arguments", argv.len()), json))
/// });
/// # let _ = (runner, reporting);
/// ```
#[derive(Clone)]
pub struct CliRunner {
    program: Arc<str>,
    kind: Kind,
}

impl CliRunner {
    /// A synchronous runner; each call runs on Tokio's blocking pool (`spawn_blocking`), so
    /// calls run in parallel. Poll [`CallContext::is_cancelled`] in long loops: a cancelled
    /// call's result is discarded, but a blocking thread cannot be interrupted.
    pub fn blocking<F, R>(program: impl Into<String>, run: F) -> CliRunner
    where
        F: Fn(Vec<String>, &CallContext) -> Result<R, ToolError> + Send + Sync + 'static,
        R: Into<ToolOutput>,
    {
        CliRunner {
            program: program.into().into(),
            kind: Kind::Blocking(Arc::new(move |argv, cx| run(argv, cx).map(Into::into))),
        }
    }

    /// An async runner; each call's future is awaited on the server's runtime and dropped
    /// when the call is cancelled.
    pub fn future<F, Fut, R>(program: impl Into<String>, run: F) -> CliRunner
    where
        F: Fn(Vec<String>, CallContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
        R: Into<ToolOutput>,
    {
        CliRunner {
            program: program.into().into(),
            kind: Kind::Async(Arc::new(move |argv, cx| {
                let run = run(argv, cx);
                Box::pin(async move { run.await.map(Into::into) })
            })),
        }
    }

    /// The program name put in front of every argv.
    pub fn program(&self) -> &str {
        &self.program
    }

    async fn run(&self, argv: Vec<String>, cx: CallContext) -> Result<ToolOutput, ToolError> {
        match &self.kind {
            Kind::Async(run) => run(argv, cx).await,
            Kind::Blocking(run) => {
                let run = run.clone();
                let tool = cx.tool().to_owned();
                tokio::task::spawn_blocking(move || run(argv, &cx)).await.unwrap_or_else(|join| {
                    Err(match join.try_into_panic() {
                        Ok(payload) => ToolError::Panicked { tool, message: panic_message(&*payload) },
                        Err(_) => ToolError::Cancelled,
                    })
                })
            }
        }
    }
}

impl fmt::Debug for CliRunner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            Kind::Blocking(_) => "blocking",
            Kind::Async(_) => "async",
        };
        f.debug_struct("CliRunner").field("program", &self.program).field("kind", &kind).finish()
    }
}

/// Parses argvs into the clap type `C` with one [`clap::Command`], built on first use and
/// kept, for use inside a [`CliRunner`].
///
/// `C::try_parse_from` (clap's derive) builds the whole command tree again on every call, and
/// for a large tree that is most of what a call costs: on a 200-leaf tree it measured about
/// 220 µs of CPU per call, against about 10 µs for the rest of a call's work
/// (`charly-mcp/benches/README.md`). [`CliParser::parse`] gives the same result and the same
/// errors (`C::try_parse_from` semantics) from the kept command. The command sits behind a
/// mutex held only while clap parses one argv (microseconds), never while a command runs, so
/// calls still run concurrently.
///
/// ```
/// use std::io::Write;
/// use charly_mcp::server::{CliParser, CliRunner};
/// # #[derive(clap::Parser)] struct Cli { #[arg(long)] name: String }
///
/// let parser = CliParser::<Cli>::new();
/// let runner = CliRunner::blocking("mycli", move |argv, cx| {
///     let cli = parser.parse(argv)?;
///     writeln!(cx.out(), "hello {}", cli.name)?;
///     Ok(())
/// });
/// # let _ = runner;
/// ```
pub struct CliParser<C> {
    command: Mutex<Option<clap::Command>>,
    parsed: PhantomData<fn() -> C>,
}

impl<C: clap::Parser> CliParser<C> {
    /// A parser for `C`; its command is built on the first [`CliParser::parse`].
    pub const fn new() -> Self {
        CliParser { command: Mutex::new(None), parsed: PhantomData }
    }

    /// Parses `argv` (program name first) into `C`.
    ///
    /// # Errors
    ///
    /// clap's error for an argv `C` does not accept, formatted against `C`'s command as
    /// `C::try_parse_from` formats it; it converts into [`ToolError::Clap`].
    pub fn parse<I, T>(&self, argv: I) -> Result<C, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let mut guard = self.command.lock().unwrap_or_else(PoisonError::into_inner);
        let command = guard.get_or_insert_with(C::command);
        let mut matches = command.try_get_matches_from_mut(argv)?;
        C::from_arg_matches_mut(&mut matches).map_err(|err| err.format(command))
    }
}

impl<C: clap::Parser> Default for CliParser<C> {
    fn default() -> Self {
        CliParser::new()
    }
}

impl<C> fmt::Debug for CliParser<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CliParser").field("parsed", &std::any::type_name::<C>()).finish()
    }
}

/// clap's rendered error for a rebuilt argv, in the caller's terms: prefixed with the tool,
/// each argument named by its JSON key instead of its command-line spelling, and without the
/// `Usage:` and `--help` lines, which describe a command line the caller never typed.
///
/// A spelling is mapped through the leaf's argument specs, not through its words: `'--output
/// <OUT_FILE>'` is the argument whose long name is `output` (which may be the field
/// `out_file`, while another field is called `output`), `'-j <JOBS>'` the one whose short name
/// is `j`, and `'<BOX>'` or `'[BOX]...'` the positional whose id is `box`. A group clap names
/// as `<--all|--name <NAMES>>` becomes `` `all` or `names` ``. A spelling that names no
/// property (a positional with its own `value_name`) is left as clap wrote it.
fn clap_message(leaf: &CliTool, rendered: &str) -> String {
    let keys = |spelling: &str| spelling_keys(leaf, spelling);
    let mut lines = Vec::new();
    for line in rendered.lines() {
        let line = line.trim_end();
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            continue;
        }
        // clap lists missing arguments one per indented line, unquoted.
        let bare = line.trim_start();
        if bare.starts_with(['-', '<', '['])
            && !bare.contains('\'')
            && let Some(keys) = keys(bare)
        {
            lines.push(format!("{}{keys}", &line[..line.len() - bare.len()]));
            continue;
        }
        // Replace each quoted argument spelling that names a property.
        let mut out = String::new();
        let mut rest = line.strip_prefix("error: ").unwrap_or(line);
        while let Some(start) = rest.find('\'') {
            let Some(len) = rest[start + 1..].find('\'') else { break };
            let quoted = &rest[start + 1..start + 1 + len];
            out.push_str(&rest[..start]);
            // `invalid value '-o' for ..`: the caller's value, whatever it looks like.
            let value = rest[..start].ends_with("value ");
            match keys(quoted).filter(|_| !value) {
                Some(keys) => out.push_str(&keys),
                None => out.push_str(&rest[start..start + len + 2]),
            }
            rest = &rest[start + len + 2..];
        }
        out.push_str(rest);
        lines.push(out);
    }
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    format!("tool `{}`: {}", leaf.name(), lines.join("\n"))
}

/// The JSON key(s) clap's `spelling` of an argument or a group stands for, quoted in
/// backticks (`` `all` or `names` `` for a group); `None` unless every part names a property.
fn spelling_keys(leaf: &CliTool, spelling: &str) -> Option<String> {
    let spelling = spelling.trim();
    // A group: `<--all|--name <NAMES>>`, or `[..|..]` when optional.
    let group = spelling
        .strip_prefix('<')
        .and_then(|s| s.strip_suffix('>'))
        .or_else(|| spelling.strip_prefix('[').and_then(|s| s.strip_suffix(']')))
        .filter(|inner| inner.contains('|'));
    let keys: Vec<&str> = match group {
        Some(inner) => inner.split('|').map(|part| spelling_key(leaf, part)).collect::<Option<_>>()?,
        None => vec![spelling_key(leaf, spelling)?],
    };
    let quoted: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    Some(match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.concat(),
    })
}

/// The property clap's spelling of one argument stands for: `--long <VALUE>` by its long
/// name, `-s <VALUE>` by its short name, `<VALUE>`/`[VALUE]...` a positional by its value name
/// (`value_name = ".."`, else clap's default: the id in capitals). Only arguments the schema
/// has are named, and a value name two positionals share names neither.
fn spelling_key<'a>(leaf: &'a CliTool, spelling: &str) -> Option<&'a str> {
    let spelling = spelling.trim();
    let word = |s: &str| s.split([' ', '=']).next().unwrap_or_default().trim_end_matches("...").to_owned();
    let normal = |s: &str| s.replace('-', "_").to_lowercase();
    let found = if let Some(long) = spelling.strip_prefix("--") {
        let long = word(long);
        leaf.args().iter().find(|a| a.long == Some(long.as_str()))
    } else if let Some(short) = spelling.strip_prefix('-') {
        let mut chars = word(short).chars().collect::<Vec<_>>().into_iter();
        let (Some(short), None) = (chars.next(), chars.next()) else { return None };
        leaf.args().iter().find(|a| a.short == Some(short))
    } else if spelling.starts_with(['<', '[']) {
        let name = word(spelling).trim_matches(['<', '>', '[', ']']).to_owned();
        let mut named = leaf.args().iter().filter(|a| {
            a.positional
                && match a.value_name {
                    Some(value_name) => value_name == name,
                    None => normal(a.id) == normal(&name),
                }
        });
        match (named.next(), named.next()) {
            (Some(one), None) => Some(one),
            _ => None,
        }
    } else {
        None
    }?;
    let properties = leaf.input_schema().get("properties").and_then(|p| p.as_object())?;
    properties.contains_key(found.id).then_some(found.id)
}

/// The text of a panic payload (`&str` or `String`), or a placeholder.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic payload)".to_owned()
    }
}

/// One [`Tool`] per leaf of `catalog`, each running its argv through `runner`.
///
/// Names, descriptions, input and output schemas and annotations are the catalog's. A call
/// rebuilds the argv with [`CliTool::argv`], which is also its argument validation (an error
/// there is an `isError` result naming the tool and key), prepends [`CliRunner::program`],
/// runs it, and returns what the command wrote to [`CallContext::out`] as one text block
/// followed by what the runner returned (see [`CliRunner`]). A leaf with an output schema
/// should return its report ([`ToolOutput::report`]) from every successful call.
pub fn cli_tools(catalog: &Catalog, runner: CliRunner) -> Vec<Tool> {
    catalog.tools().iter().map(|leaf| cli_tool(leaf.clone(), runner.clone())).collect()
}

fn cli_tool(leaf: CliTool, runner: CliRunner) -> Tool {
    let name = leaf.name().to_owned();
    let description = leaf.description().to_owned();
    let schema = leaf.input_schema().clone();
    let output_schema = leaf.output_schema().cloned();
    let annotations = leaf.annotations();
    let leaf = Arc::new(leaf);
    let handler: Handler = Arc::new(move |args, cx| {
        let leaf = leaf.clone();
        let runner = runner.clone();
        Box::pin(async move {
            let mut argv = vec![runner.program.to_string()];
            argv.extend(leaf.argv(&args)?);
            let out = cx.out();
            let result = runner.run(argv, cx).await;
            let text = out.take_text();
            match result {
                Ok(ToolOutput(mut result)) => {
                    if !text.is_empty() || result.content.is_empty() {
                        result.content.insert(0, ContentBlock::text(text));
                    }
                    Ok(ToolOutput(result))
                }
                Err(err) => {
                    let mut content = Vec::new();
                    if !text.is_empty() {
                        content.push(ContentBlock::text(text));
                    }
                    let message = match err {
                        ToolError::Clap(rendered) => clap_message(&leaf, &rendered),
                        other => other.to_string(),
                    };
                    // clap's errors and the command's quote the values they refuse: long ones
                    // are shortened (`crate::quote`), whoever wrote the message.
                    let message = match long_strings(&args) {
                        long if long.is_empty() => message,
                        long => shorten_in(&message, long).into_owned(),
                    };
                    content.push(ContentBlock::text(message));
                    Ok(ToolOutput(CallToolResult::error(content)))
                }
            }
        })
    });
    Tool::cli_leaf(name, description, schema, output_schema, annotations, handler)
}
