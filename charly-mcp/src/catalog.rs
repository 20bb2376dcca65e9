//! Tool catalogs: the leaves of a clap command tree as MCP tools.
//!
//! `#[derive(McpTool)]` (from `charly-macros`) implements [`McpTool`] for clap
//! `Parser`/`Args` structs and `Subcommand` enums. [`McpTool::catalog`] walks the
//! generated code once and returns a [`Catalog`]: one [`CliTool`] per leaf command,
//! each with its name, description, input schema, annotations and its argument specs
//! ([`crate::arg::Arg`]), listed once by generated code and read by both the schema
//! builder (at catalog time) and the argv rebuild (on every call).
//!
//! The `charly` crate's documentation has a worked example.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::arg::{Arg, ArgList, ArgSpec};
use crate::argv::{ArgError, ArgReader, Argv};
pub use crate::model::{Annotations, JsonObject};
use crate::schema::ObjectSchema;

/// Signature of a generated argument lister: pushes a command's argument specs, in order.
pub type ArgsFn = fn(&mut ArgList);

/// One leaf command of a clap tree, as an MCP tool.
#[derive(Clone)]
pub struct CliTool {
    name: String,
    path: Vec<&'static str>,
    description: String,
    input_schema: Arc<JsonObject>,
    annotations: Annotations,
    /// The argument specs, in declaration order (positionals in clap's `index` order): what
    /// [`CliTool::argv`] walks.
    args: Arc<[Arg]>,
    output_schema: Option<Arc<JsonObject>>,
}

impl CliTool {
    /// The tool name: the dot-joined command path as clap spells it (`box.new.project`),
    /// or the `#[mcp_tool(name = "...")]` override.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The clap command path of the leaf, without the program name (`["box", "new", "project"]`);
    /// empty when the leaf is the root command itself.
    pub fn path(&self) -> &[&'static str] {
        &self.path
    }

    /// The description: the command's about text (long about when the doc comment has several
    /// paragraphs), or ``Runs the `NAME` command.`` for a command without one, with a
    /// `[destructive: ...]` suffix on destructive tools.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The input schema: `{"type":"object","properties":{..},"required":[..],"additionalProperties":false}`.
    pub fn input_schema(&self) -> &Arc<JsonObject> {
        &self.input_schema
    }

    /// The output schema, when the leaf declares its report type with
    /// `#[mcp_tool(output = Report)]`: [`crate::schema::output_schema`] of that type, an
    /// object schema with every `$ref` inlined. `None` for leaves without one.
    pub fn output_schema(&self) -> Option<&Arc<JsonObject>> {
        self.output_schema.as_ref()
    }

    /// The four MCP annotations.
    pub fn annotations(&self) -> Annotations {
        self.annotations
    }

    /// Whether the tool is marked `#[mcp_tool(destructive)]`.
    pub fn is_destructive(&self) -> bool {
        self.annotations.destructive_hint
    }

    /// The argument specs, in declaration order (hidden arguments included).
    pub(crate) fn args(&self) -> &[Arg] {
        &self.args
    }

    /// Rebuilds the argv for this leaf from JSON arguments, without the program name:
    /// the command path, `--long=value` flags, then `--` and the positionals.
    ///
    /// This is also the leaf's argument validation: it refuses exactly what the leaf's input
    /// schema refuses (`type`, `minimum`/`maximum`, `minLength`/`maxLength`, the delimiter
    /// `pattern`, `minItems`/`maxItems`, `enum`, `required`, `additionalProperties: false`), so a
    /// server needs no JSON Schema validator for CLI leaves (`tests/derive_roundtrip.rs`
    /// holds the two to the same verdicts).
    ///
    /// # Errors
    ///
    /// An [`ArgError`] naming this tool and the key when a key is unknown, a value has the
    /// wrong JSON type, is out of range or is not one of the possible values, or a required
    /// argument is missing.
    pub fn argv(&self, args: &JsonObject) -> Result<Vec<String>, ArgError> {
        let mut reader = ArgReader::new(&self.name, args);
        let mut argv = Argv::default();
        for arg in self.args.iter() {
            reader.arg(&mut argv, arg)?;
        }
        reader.finish()?;
        self.check_possible_values(args)?;
        Ok(argv.into_vec(&self.path))
    }

    /// Checks each value whose property has an `enum` (a `ValueEnum`, or `value_parser =
    /// [..]`) against it. The possible values are known only once the catalog is built, so
    /// they are read back from the schema, where the catalog put them.
    fn check_possible_values(&self, args: &JsonObject) -> Result<(), ArgError> {
        let Some(Value::Object(properties)) = self.input_schema.get("properties") else { return Ok(()) };
        for (key, value) in args {
            let Some(property) = properties.get(key) else { continue };
            let (allowed, values) = match (property.get("enum"), property.get("items")) {
                (Some(Value::Array(allowed)), _) => (allowed, std::slice::from_ref(value)),
                (None, Some(items)) => match (items.get("enum"), value) {
                    (Some(Value::Array(allowed)), Value::Array(values)) => (allowed, values.as_slice()),
                    _ => continue,
                },
                _ => continue,
            };
            if let Some(bad) = values.iter().find(|v| !allowed.contains(v)) {
                let names: Vec<String> = allowed.iter().map(Value::to_string).collect();
                return Err(ArgError::Invalid {
                    tool: self.name.clone(),
                    key: key.clone(),
                    problem: format!(
                        "{} is not a possible value (allowed: {})",
                        crate::quote::Quoted::new(bad.to_string()),
                        names.join(", ")
                    ),
                });
            }
        }
        Ok(())
    }
}

impl fmt::Debug for CliTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CliTool")
            .field("name", &self.name)
            .field("path", &self.path)
            .field("annotations", &self.annotations)
            .finish_non_exhaustive()
    }
}

/// The catalog of a clap command tree: its leaf commands as [`CliTool`]s, in declaration order.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    tools: Vec<CliTool>,
}

impl Catalog {
    /// All tools, in declaration order.
    pub fn tools(&self) -> &[CliTool] {
        &self.tools
    }

    /// The tool with this exact name.
    pub fn get(&self, name: &str) -> Option<&CliTool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the catalog has no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The catalog without destructive tools (what `--read-only` serves).
    pub fn read_only(&self) -> Catalog {
        Catalog { tools: self.tools.iter().filter(|t| !t.is_destructive()).cloned().collect() }
    }

    /// The catalog as JSON: `[{"name","description","inputSchema","annotations"}, ..]`,
    /// the shape of `tools/list` entries (used for snapshots), with `"outputSchema"` after
    /// `"inputSchema"` for the leaves that have one.
    pub fn to_json(&self) -> Value {
        Value::Array(
            self.tools
                .iter()
                .map(|t| {
                    let mut tool = Map::new();
                    tool.insert("name".into(), t.name.clone().into());
                    tool.insert("description".into(), t.description.clone().into());
                    tool.insert("inputSchema".into(), Value::Object((*t.input_schema).clone()));
                    if let Some(output) = &t.output_schema {
                        tool.insert("outputSchema".into(), Value::Object((**output).clone()));
                    }
                    tool.insert(
                        "annotations".into(),
                        serde_json::to_value(t.annotations).expect("annotations serialise"),
                    );
                    Value::Object(tool)
                })
                .collect(),
        )
    }
}

impl IntoIterator for Catalog {
    type Item = CliTool;
    type IntoIter = std::vec::IntoIter<CliTool>;
    fn into_iter(self) -> Self::IntoIter {
        self.tools.into_iter()
    }
}

/// A clap command (leaf or branch) that knows its MCP tools. Implemented by `#[derive(McpTool)]`.
pub trait McpTool {
    /// Visits this command's leaves. Generated; called by [`McpTool::catalog`].
    #[doc(hidden)]
    fn mcp_visit(cx: &mut Visitor);

    /// Builds the catalog of every leaf command below (and including) this one.
    ///
    /// # Panics
    ///
    /// When two leaves end up with the same tool name, or names that are the same once dots
    /// become `_` (possible only across types, through
    /// `#[command(flatten)]` of subcommand enums or `#[mcp_tool(name = "...")]`: the derive
    /// rejects duplicates within one type at compile time), or a joined name is longer than
    /// 64 characters, or a leaf mixes positionals with and without `#[arg(index = N)]`
    /// (possible only through `#[command(flatten)]`).
    #[track_caller]
    fn catalog() -> Catalog
    where
        Self: Sized,
    {
        let mut cx = Visitor::default();
        Self::mcp_visit(&mut cx);
        cx.finish()
    }
}

/// The arguments of a clap `Args` struct, for leaves and `#[command(flatten)]`.
/// Implemented by `#[derive(McpTool)]` on structs without a subcommand field.
pub trait McpArgs {
    /// Pushes the spec of each of this struct's arguments, in declaration order (flattened
    /// structs in place). Generated; read once per leaf when the catalog is built.
    #[doc(hidden)]
    fn mcp_args(list: &mut ArgList);
}

/// Attributes of one node of the command tree, as the derive found them.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Node {
    /// The clap command name of this node (the argv segment); `None` for the root.
    pub segment: Option<&'static str>,
    /// `#[mcp_tool(name = "...")]`: the whole tool name on a leaf, this segment's name on a branch.
    pub name: Option<&'static str>,
    /// The command's own clap name, used when it is the root of a catalog.
    pub root_name: Option<&'static str>,
    /// The about text (first doc paragraph or `about = ".."`).
    pub about: Option<&'static str>,
    /// The long about text (the whole doc comment, or `long_about = ".."`).
    pub long_about: Option<&'static str>,
    /// `#[mcp_tool(destructive)]`: `Some(reason)`, the reason empty when none was given.
    pub destructive: Option<&'static str>,
    /// `#[mcp_tool(idempotent)]`.
    pub idempotent: bool,
    /// `#[mcp_tool(open_world)]`.
    pub open_world: bool,
    /// `#[mcp_tool(output = T)]`: `output_schema::<T>`, called when the catalog is built.
    pub output: Option<fn() -> Arc<JsonObject>>,
}

impl Node {
    /// A node with no attributes: what generated code fills in from.
    pub const NONE: Node = Node {
        segment: None,
        name: None,
        root_name: None,
        about: None,
        long_about: None,
        destructive: None,
        idempotent: false,
        open_world: false,
        output: None,
    };
}

/// Walks the generated code of a command tree and collects its leaves.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct Visitor {
    stack: Vec<Node>,
    tools: Vec<CliTool>,
}

/// Whether destructive leaves are compiled out (`read-only` feature).
const READ_ONLY_BUILD: bool = cfg!(feature = "read-only");

impl Visitor {
    /// Enters a branch or leaf node; `visit` adds what is below it.
    pub fn node(&mut self, node: Node, visit: impl FnOnce(&mut Self)) {
        self.stack.push(node);
        visit(self);
        self.stack.pop();
    }

    /// Adds a leaf whose own attributes are `node` (merged with the enclosing nodes') and
    /// whose arguments `args` lists.
    pub fn leaf(&mut self, node: Node, args: ArgsFn) {
        self.stack.push(node);
        self.push_leaf(args);
        self.stack.pop();
    }

    fn push_leaf(&mut self, args_fn: ArgsFn) {
        // The nodes from the one that names the leaf (the last with a segment) to the leaf
        // itself describe the leaf; the nodes above are its branches.
        let split = self.stack.iter().rposition(|n| n.segment.is_some());
        let (branches, own) = self.stack.split_at(split.unwrap_or(0));
        let destructive = self.stack.iter().rev().find_map(|n| n.destructive);
        if READ_ONLY_BUILD && destructive.is_some() {
            return;
        }
        let path: Vec<&'static str> = self.stack.iter().filter_map(|n| n.segment).collect();
        // A leaf that is the root itself has an empty path (its argv is just its arguments)
        // and is named after the command, as clap calls it.
        let last = path.last().copied().or_else(|| own.iter().rev().find_map(|n| n.root_name));
        let name = match own.iter().rev().find_map(|n| n.name) {
            Some(full) => full.to_owned(),
            None => {
                branches.iter().filter_map(|n| n.name.or(n.segment)).chain(last).collect::<Vec<_>>().join(".")
            }
        };
        // As in clap, a variant's doc comment overrides that of the struct it holds.
        let about = own.iter().find_map(|n| n.long_about.or(n.about));
        // The same for the report type: the variant's wins over its struct's.
        let output_schema = own.iter().find_map(|n| n.output).map(|schema| schema());
        // A command without a doc comment (or `about`) would be a tool with an empty
        // description, which tells a model nothing and which hosts' linters flag: it gets a
        // neutral one naming the command.
        let mut description = match about.filter(|a| !a.trim().is_empty()) {
            Some(about) => about.to_owned(),
            None => format!("Runs the `{name}` command."),
        };
        if let Some(reason) = destructive {
            let reason = if reason.is_empty() { "changes files or state" } else { reason };
            if !description.is_empty() {
                description.push(' ');
            }
            description.push_str(&format!("[destructive: {reason}]"));
        }
        let mut list = ArgList::default();
        args_fn(&mut list);
        check_kept_off(&name, &list);
        let mut schema = ObjectSchema::default();
        let mut args: Vec<Arg> = list
            .into_specs()
            .into_iter()
            .map(|spec| {
                schema.arg(&spec.arg, spec.help, &spec.defaults, spec.possible);
                spec.arg
            })
            .collect();
        order_positionals(&name, &mut args);
        self.tools.push(CliTool {
            name,
            path,
            description,
            input_schema: Arc::new(schema.into_json()),
            annotations: Annotations {
                read_only_hint: destructive.is_none(),
                destructive_hint: destructive.is_some(),
                idempotent_hint: self.stack.iter().any(|n| n.idempotent),
                open_world_hint: self.stack.iter().any(|n| n.open_world),
            },
            args: args.into(),
            output_schema,
        });
    }

    #[track_caller]
    fn finish(self) -> Catalog {
        let mut seen = HashSet::new();
        let mut joined = std::collections::HashMap::new();
        for tool in &self.tools {
            assert!(
                crate::names::is_valid_tool_name(&tool.name),
                "charly: tool name `{}` is not a valid MCP tool name \
                 (1 to 64 of `a-z A-Z 0-9 _ . -`); shorten it with #[mcp_tool(name = \"...\")]",
                tool.name
            );
            assert!(
                seen.insert(tool.name.as_str()),
                "charly: two leaf commands are both named `{}`; \
                 rename one with #[mcp_tool(name = \"...\")]",
                tool.name
            );
            let underscored = crate::names::underscored(&tool.name);
            if let Some(other) = joined.insert(underscored.clone(), tool.name.as_str()) {
                panic!(
                    "charly: leaf commands `{other}` and `{}` are both `{underscored}` once dots become `_` \
                     (the spelling clients that reject dots get); rename one with #[mcp_tool(name = \"...\")]",
                    tool.name
                );
            }
        }
        Catalog { tools: self.tools }
    }
}

/// Refuses a positional kept off the tool (`cli_only`, `hide = true`) that comes before a
/// positional the tool takes, in clap's order: a call never gives it, so clap would read the
/// later value in its place.
///
/// # Panics
///
/// On such a pair. The derive refuses it within one struct or variant at compile time; only a
/// `#[command(flatten)]` can bring the two together.
fn check_kept_off(tool: &str, list: &ArgList) {
    let given: Vec<(usize, &ArgSpec)> =
        list.specs().iter().filter(|s| s.arg.positional).enumerate().collect();
    for off in list.kept_off_positionals() {
        let later = given.iter().find(|(place, s)| match (off.index, s.arg.index) {
            (Some(a), Some(b)) => b > a,
            _ => *place >= off.after,
        });
        if let Some((_, later)) = later {
            panic!(
                "charly: tool `{tool}`: positional `{}` is not a tool input (`#[mcp_tool(cli_only)]` \
                 or `hide = true`), but positional `{}` after it is (through #[command(flatten)]): a \
                 call never gives `{0}`, so clap would read the value of `{1}` as `{0}`; put `{0}` \
                 after the tool's positionals, make it a flag (`#[arg(long)]`), or keep `{1}` off the \
                 tool too",
                off.id, later.arg.id
            );
        }
    }
}

/// Puts the positionals of a leaf in clap's order: by `#[arg(index = N)]` when they give one
/// (clap follows `index`, not the declaration order), as declared otherwise. Flags keep
/// their places (they are written before the `--` whatever their order).
///
/// # Panics
///
/// When some positionals give an `index` and others do not. The derive refuses that within
/// one struct or variant at compile time; only a `#[command(flatten)]` can bring the two
/// together.
fn order_positionals(tool: &str, args: &mut [Arg]) {
    let slots: Vec<usize> = (0..args.len()).filter(|&i| args[i].positional).collect();
    let Some(with) = slots.iter().copied().find(|&i| args[i].index.is_some()) else {
        return; // declaration order, as clap numbers them
    };
    if let Some(without) = slots.iter().copied().find(|&i| args[i].index.is_none()) {
        panic!(
            "charly: tool `{tool}`: positional `{}` has no `index`, but `{}` has one (through \
             #[command(flatten)]): charly orders a tool call's positionals by `index` only when \
             every positional of the command gives one; give each an `#[arg(index = N)]`, or none",
            args[without].id, args[with].id
        );
    }
    let mut positionals: Vec<Arg> = slots.iter().map(|&i| args[i].clone()).collect();
    positionals.sort_by_key(|a| a.index);
    for (slot, arg) in slots.into_iter().zip(positionals) {
        args[slot] = arg;
    }
}
