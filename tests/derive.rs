//! The derive against the test CLI: catalog snapshot and worked examples.

mod common;

use charly::McpTool;
use common::test_cli::Cli;

/// The full catalog (the `read-only` build has its own snapshot, see tests/read_only.rs).
#[cfg(not(feature = "read-only"))]
#[test]
fn catalog_snapshot() {
    let catalog = Cli::catalog();
    insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_json_snapshot!("test_cli_catalog", catalog.to_json());
    });
}

mod runtime_guards {
    //! What the derive cannot see at compile time, `catalog()` refuses at run time.

    use charly::McpTool;
    use clap::{Parser, Subcommand};

    #[derive(Subcommand, McpTool)]
    enum Images {
        /// Fetch images
        Fetch,
    }

    #[derive(Subcommand, McpTool)]
    enum Sources {
        /// Fetch sources
        Fetch,
    }

    /// Each enum is fine on its own; flattened side by side, both publish `fetch`.
    #[derive(Subcommand, McpTool)]
    enum Both {
        #[command(flatten)]
        Images(Images),
        #[command(flatten)]
        Sources(Sources),
    }

    #[derive(Parser, McpTool)]
    struct Dup {
        #[command(subcommand)]
        cmd: Both,
    }

    #[test]
    #[should_panic(expected = "two leaf commands are both named `fetch`")]
    fn duplicate_names_across_types() {
        let _ = Dup::catalog();
    }

    #[derive(Subcommand, McpTool)]
    enum BoxCmds {
        /// List boxes
        List,
    }

    #[derive(Subcommand, McpTool)]
    enum Grouped {
        /// Work on boxes
        #[command(subcommand)]
        Box(BoxCmds),
    }

    #[derive(Subcommand, McpTool)]
    enum Joined {
        /// List boxes, in one word
        #[command(name = "box_list")]
        BoxList,
    }

    /// `box.list` (a group and its leaf) and `box_list` (one leaf) are different names, but
    /// a client that rejects dots gets `box_list` for both, and the server routes both
    /// spellings: the catalog refuses the pair. The derive catches this within one enum
    /// (tests/ui/name/duplicate-after-underscore.rs); across types only the catalog can.
    #[derive(Subcommand, McpTool)]
    enum Spellings {
        #[command(flatten)]
        Grouped(Grouped),
        #[command(flatten)]
        Joined(Joined),
    }

    #[derive(Parser, McpTool)]
    struct Collide {
        #[command(subcommand)]
        cmd: Spellings,
    }

    #[test]
    #[should_panic(
        expected = "leaf commands `box.list` and `box_list` are both `box_list` once dots become `_`"
    )]
    fn names_that_meet_after_underscoring_across_types() {
        let _ = Collide::catalog();
    }

    /// Each half alone is a fine catalog (so the panic above is the pair's, not either's).
    #[derive(Parser, McpTool)]
    struct OnlyGrouped {
        #[command(subcommand)]
        cmd: Grouped,
    }

    #[derive(Parser, McpTool)]
    struct OnlyJoined {
        #[command(subcommand)]
        cmd: Joined,
    }

    #[test]
    fn either_spelling_alone_is_fine() {
        assert!(OnlyGrouped::catalog().get("box.list").is_some());
        assert!(OnlyJoined::catalog().get("box_list").is_some());
    }

    #[derive(Subcommand, McpTool)]
    enum Deep {
        /// A leaf whose own name is fine
        ThisLeafNameIsQuiteLongButValidOnItsOwn,
    }

    #[derive(Subcommand, McpTool)]
    enum Top {
        /// A group whose own name is fine
        #[command(subcommand)]
        ThisGroupNameIsAlsoQuiteLongOnItsOwn(Deep),
    }

    #[derive(Parser, McpTool)]
    struct Long {
        #[command(subcommand)]
        cmd: Top,
    }

    #[test]
    #[should_panic(expected = "is not a valid MCP tool name")]
    fn joined_name_longer_than_64() {
        let _ = Long::catalog();
    }
}

mod single_command {
    //! A `Parser` struct without subcommands is itself the one tool.

    use charly::McpTool;
    use clap::Parser;
    use serde_json::json;

    /// Greet someone
    #[derive(Parser, McpTool, Debug, PartialEq)]
    #[command(name = "hello")]
    struct Hello {
        /// Shout
        #[arg(long)]
        loud: bool,
        /// Who
        name: String,
    }

    #[derive(Parser, McpTool, Debug)]
    #[command(name = "quiet")]
    struct Undocumented {
        #[arg(long)]
        level: Option<u8>,
    }

    /// A command with no doc comment gets a description naming it, not an empty one.
    #[test]
    fn a_root_without_a_doc_comment_is_described_by_its_name() {
        assert_eq!(Hello::catalog().get("hello").unwrap().description(), "Greet someone");
        let catalog = Undocumented::catalog();
        assert_eq!(catalog.get("quiet").unwrap().description(), "Runs the `quiet` command.");
    }

    #[test]
    fn the_root_leaf_is_named_after_the_command_and_its_argv_has_no_path() {
        let catalog = Hello::catalog();
        let tool = catalog.get("hello").expect("the root leaf is named after the command");
        assert_eq!(catalog.len(), 1);
        assert!(tool.path().is_empty(), "{:?}", tool.path());
        let argv = tool.argv(json!({"loud": true, "name": "--world"}).as_object().unwrap()).unwrap();
        assert_eq!(argv, ["--loud", "--", "--world"]);
        let parsed = Hello::try_parse_from(std::iter::once("hello".to_owned()).chain(argv)).unwrap();
        assert_eq!(parsed, Hello { loud: true, name: "--world".into() });
    }
}

mod cli_only {
    //! `#[mcp_tool(cli_only)]` on a field: on the command line, not on the tool.

    use charly::McpTool;
    use clap::{CommandFactory, Parser};
    use serde_json::json;

    /// Check a box
    #[derive(Parser, McpTool, Debug, PartialEq)]
    #[command(name = "check")]
    struct Check {
        /// Box name
        name: String,
        /// Only these checks
        #[arg(long)]
        filter: Option<String>,
        /// Also write a report file (on a terminal only)
        #[arg(long)]
        #[mcp_tool(cli_only)]
        report: Option<std::path::PathBuf>,
    }

    #[test]
    fn the_argument_is_left_out_of_the_tool_and_kept_on_the_command_line() {
        let catalog = Check::catalog();
        let tool = catalog.get("check").unwrap();
        let schema = serde_json::Value::Object(tool.input_schema().as_ref().clone());
        let properties = &schema["properties"];
        assert!(properties.get("report").is_none() && properties.get("filter").is_some(), "{properties}");
        let err = tool.argv(json!({"name": "web", "report": "r.xml"}).as_object().unwrap()).unwrap_err();
        assert_eq!(err.to_string(), "tool `check`: unknown argument `report` (allowed: filter, name)");
        let parsed = Check::try_parse_from(["check", "web", "--report", "r.xml"]).unwrap();
        assert_eq!(parsed.report.as_deref(), Some(std::path::Path::new("r.xml")));
        let help = Check::command().render_long_help().to_string();
        assert!(help.contains("--report"), "{help}");
    }
}

mod positional_index {
    //! `#[arg(index = N)]`: clap orders positionals by it, and so does the argv rebuild.

    use charly::McpTool;
    use clap::{Args, Parser, Subcommand};
    use serde_json::json;

    #[derive(Parser, McpTool, Debug, PartialEq)]
    struct Cli {
        #[command(subcommand)]
        cmd: Cmd,
    }

    #[derive(Subcommand, McpTool, Debug, PartialEq)]
    enum Cmd {
        /// Copy a file
        Cp {
            /// Where to
            #[arg(index = 2)]
            dest: String,
            /// What
            #[arg(index = 1)]
            src: String,
            /// Overwrite
            #[arg(long)]
            force: bool,
        },
        /// Link a file, its positionals declared in a flattened struct
        Ln(Link),
    }

    #[derive(Args, McpTool, Debug, PartialEq)]
    struct Link {
        #[command(flatten)]
        to: To,
        /// What
        #[arg(index = 1)]
        src: String,
        /// Extra names
        #[arg(index = 3)]
        more: Vec<String>,
    }

    #[derive(Args, McpTool, Debug, PartialEq)]
    struct To {
        /// Where to
        #[arg(index = 2)]
        dest: String,
    }

    fn parse(argv: Vec<String>) -> Cli {
        Cli::try_parse_from(std::iter::once("prog".to_owned()).chain(argv)).unwrap()
    }

    #[test]
    fn positionals_go_in_index_order() {
        let catalog = Cli::catalog();
        let cp = catalog.get("cp").unwrap();
        let argv =
            cp.argv(json!({"dest": "DEST", "src": "-SRC", "force": true}).as_object().unwrap()).unwrap();
        assert_eq!(argv, ["cp", "--force", "--", "-SRC", "DEST"]);
        assert_eq!(
            parse(argv),
            Cli { cmd: Cmd::Cp { dest: "DEST".into(), src: "-SRC".into(), force: true } }
        );

        let ln = catalog.get("ln").unwrap();
        let argv =
            ln.argv(json!({"more": ["m1", "m2"], "dest": "d", "src": "s"}).as_object().unwrap()).unwrap();
        assert_eq!(argv, ["ln", "--", "s", "d", "m1", "m2"]);
        let expected =
            Link { to: To { dest: "d".into() }, src: "s".into(), more: vec!["m1".into(), "m2".into()] };
        assert_eq!(parse(argv), Cli { cmd: Cmd::Ln(expected) });
        // A later positional cannot be given without an earlier one, in index order.
        let err = ln.argv(json!({"src": "s", "more": ["m"]}).as_object().unwrap()).unwrap_err();
        assert_eq!(err.to_string(), "tool `ln`: missing required argument `dest` (a string)");
    }

    #[derive(Args, McpTool)]
    struct Indexed {
        #[arg(index = 1)]
        first: String,
    }

    /// `first` has an index; the flattened struct's `second` has none.
    #[derive(Parser, McpTool)]
    struct Mixed {
        #[command(flatten)]
        indexed: Indexed,
        #[command(flatten)]
        plain: Plain,
    }

    #[derive(Args, McpTool)]
    struct Plain {
        second: String,
    }

    #[test]
    #[should_panic(expected = "positional `second` has no `index`, but `first` has one")]
    fn mixed_indexes_across_flatten_are_refused() {
        let _ = Mixed::catalog();
    }
}

mod flag_env {
    //! A bool flag with `env` takes `action = ArgAction::Set` (a bare `env` flag is a compile
    //! error, tests/ui/flag/env-no-off.rs): `false` is then sent as `--offline=false`, which
    //! clap takes over the server's environment.

    use charly::McpTool;
    use clap::Parser;
    use serde_json::json;

    const VAR: &str = "CHARLY_TEST_DERIVE_OFFLINE";

    /// Install a package
    #[derive(Parser, McpTool, Debug)]
    #[command(name = "install")]
    struct Install {
        /// Offline mode
        #[arg(long, env = "CHARLY_TEST_DERIVE_OFFLINE", action = clap::ArgAction::Set, default_value_t = false)]
        offline: bool,
    }

    fn run(args: serde_json::Value) -> bool {
        let catalog = Install::catalog();
        let argv = catalog.get("install").unwrap().argv(args.as_object().unwrap()).unwrap();
        Install::try_parse_from(std::iter::once("install".to_owned()).chain(argv)).unwrap().offline
    }

    /// Runs in a child process with `VAR=true` (the tests cannot set the environment of
    /// their own process: `unsafe` is forbidden, and other tests run beside them).
    #[test]
    fn false_wins_over_the_servers_environment() {
        if std::env::var_os(VAR).is_none() {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "flag_env::false_wins_over_the_servers_environment", "--nocapture"])
                .env(VAR, "true")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success() && text.contains("1 passed"), "{text}");
            return;
        }
        let schema = serde_json::Value::Object(Install::catalog().tools()[0].input_schema().as_ref().clone());
        assert_eq!(schema["properties"]["offline"]["type"], "boolean", "{schema}");
        assert!(run(json!({})), "left out, clap reads {VAR}=true");
        assert!(!run(json!({"offline": false})), "an explicit false beats {VAR}=true");
        assert!(run(json!({"offline": true})));
    }
}

/// A bare `env` flag is refused only as a tool input: `cli_only`, it stays on the command line.
mod flag_env_cli_only {
    use charly::McpTool;
    use clap::Parser;

    /// Say nothing
    #[derive(Parser, McpTool)]
    #[command(name = "quiet")]
    struct Quiet {
        /// Quiet mode
        #[arg(long, env = "CHARLY_TEST_DERIVE_QUIET")]
        #[mcp_tool(cli_only)]
        quiet: bool,
    }

    #[test]
    fn it_is_left_out_of_the_tool() {
        let catalog = Quiet::catalog();
        let schema = serde_json::Value::Object(catalog.tools()[0].input_schema().as_ref().clone());
        assert_eq!(schema["properties"], serde_json::json!({}), "{schema}");
    }
}

mod variant_with_subcommand {
    //! A struct variant with its own flags and a `#[command(subcommand)]` field is a branch,
    //! as a struct with a subcommand field is: its subcommands are the leaves, and its own
    //! (optional) flags are not tool inputs.

    use charly::McpTool;
    use clap::{Parser, Subcommand};
    use serde_json::json;

    #[derive(Parser, McpTool, Debug, PartialEq)]
    struct Cli {
        #[command(subcommand)]
        cmd: Cmd,
    }

    #[derive(Subcommand, McpTool, Debug, PartialEq)]
    enum Cmd {
        /// Remote ops
        Remote {
            /// Say more
            #[arg(long)]
            verbose: bool,
            #[command(subcommand)]
            sub: Sub,
        },
        /// Optional subcommands
        Tag {
            #[arg(long, default_value = "main")]
            branch: String,
            #[command(subcommand)]
            sub: Option<Sub>,
        },
    }

    #[derive(Subcommand, McpTool, Debug, PartialEq)]
    enum Sub {
        /// Show a remote
        Show {
            /// Its name
            name: String,
        },
        /// List remotes
        List,
    }

    #[test]
    fn its_subcommands_are_the_tools() {
        let catalog = Cli::catalog();
        let names: Vec<&str> = catalog.tools().iter().map(|t| t.name()).collect();
        assert_eq!(names, ["remote.show", "remote.list", "tag.show", "tag.list"]);
        let show = catalog.get("remote.show").unwrap();
        let schema = serde_json::Value::Object(show.input_schema().as_ref().clone());
        assert_eq!(schema["properties"].as_object().unwrap().keys().collect::<Vec<_>>(), ["name"]);
        assert_eq!(show.description(), "Show a remote");
        let argv = show.argv(json!({"name": "-o"}).as_object().unwrap()).unwrap();
        assert_eq!(argv, ["remote", "show", "--", "-o"]);
        let parsed = Cli::try_parse_from(std::iter::once("prog".to_owned()).chain(argv)).unwrap();
        assert_eq!(parsed.cmd, Cmd::Remote { verbose: false, sub: Sub::Show { name: "-o".into() } });
        let argv = catalog.get("tag.list").unwrap().argv(&serde_json::Map::new()).unwrap();
        let parsed = Cli::try_parse_from(std::iter::once("prog".to_owned()).chain(argv)).unwrap();
        assert_eq!(parsed.cmd, Cmd::Tag { branch: "main".into(), sub: Some(Sub::List) });
    }
}

mod positional_num_args {
    //! A positional's literal `num_args` bounds its array (`minItems`/`maxItems`), so the
    //! schema refuses what clap refuses, and the argv rebuild with it.

    use charly::McpTool;
    use clap::{Parser, Subcommand};
    use serde_json::{Value, json};

    #[derive(Parser, McpTool, Debug, PartialEq)]
    struct Cli {
        #[command(subcommand)]
        cmd: Cmd,
    }

    #[derive(Subcommand, McpTool, Debug, PartialEq)]
    enum Cmd {
        /// Exactly two
        Pair {
            #[arg(num_args = 2)]
            pair: Vec<String>,
            #[arg(long)]
            sep: bool,
        },
        /// One to three
        Few {
            #[arg(num_args = 1..=3)]
            few: Vec<i32>,
        },
    }

    /// Checks `args` against the tool's schema and its argv rebuild (which must agree), and
    /// returns what clap parsed from the argv when both take it.
    fn take(tool: &charly::CliTool, args: &Value) -> Option<Cmd> {
        let schema = Value::Object(tool.input_schema().as_ref().clone());
        let argv = tool.argv(args.as_object().unwrap());
        assert_eq!(argv.is_ok(), jsonschema::draft202012::is_valid(&schema, args), "{args}: argv {argv:?}");
        let argv = argv.ok()?;
        Some(Cli::try_parse_from(std::iter::once("prog".to_owned()).chain(argv)).unwrap().cmd)
    }

    /// clap's own verdict on these values given on the command line.
    fn clap_takes(cmd: &str, values: &[&str]) -> bool {
        Cli::try_parse_from(["prog", cmd, "--"].into_iter().chain(values.iter().copied())).is_ok()
    }

    #[test]
    fn the_schema_and_the_argv_take_what_clap_takes() {
        let catalog = Cli::catalog();
        let (pair, few) = (catalog.get("pair").unwrap(), catalog.get("few").unwrap());
        let props = |t: &charly::CliTool| t.input_schema()["properties"].clone();
        assert_eq!(props(pair)["pair"]["minItems"], 2, "{}", props(pair));
        assert_eq!(props(pair)["pair"]["maxItems"], 2, "{}", props(pair));
        assert_eq!(props(few)["few"].get("minItems"), None, "{}", props(few));
        assert_eq!(props(few)["few"]["maxItems"], 3, "{}", props(few));

        assert_eq!(
            take(pair, &json!({"pair": ["a", "-b"], "sep": true})),
            Some(Cmd::Pair { pair: vec!["a".into(), "-b".into()], sep: true })
        );
        assert_eq!(take(pair, &json!({})), Some(Cmd::Pair { pair: vec![], sep: false }));
        assert_eq!(take(few, &json!({"few": [1, -2, 3]})), Some(Cmd::Few { few: vec![1, -2, 3] }));
        for values in [&["a"][..], &["a", "b", "c"]] {
            assert_eq!(take(pair, &json!({ "pair": values })), None, "{values:?}");
            assert!(!clap_takes("pair", values), "clap refuses {values:?} too");
        }
        assert_eq!(take(few, &json!({"few": [1, 2, 3, 4]})), None);
        assert!(!clap_takes("few", &["1", "2", "3", "4"]));
        let err = pair.argv(json!({"pair": ["a", "b", "c"]}).as_object().unwrap()).unwrap_err();
        assert_eq!(err.to_string(), "tool `pair`: argument `pair`: expected at most 2 item(s), got 3");
    }
}

mod tuple_with_parser {
    //! clap's typed-derive `Vec<(K, V)>` with an explicit `value_parser`: each value is the
    //! text the parser reads, so a JSON string.

    use charly::McpTool;
    use clap::Parser;
    use serde_json::json;

    /// Parse a single key-value pair (clap's typed-derive example).
    fn parse_key_val(s: &str) -> Result<(String, i32), String> {
        let (key, value) = s.split_once('=').ok_or_else(|| format!("no `=` found in `{s}`"))?;
        Ok((key.to_owned(), value.parse().map_err(|e| format!("{e}"))?))
    }

    /// Define things
    #[derive(Parser, McpTool, Debug, PartialEq)]
    #[command(name = "define")]
    struct Define {
        /// KEY=VALUE pairs
        #[arg(short = 'D', value_parser = parse_key_val)]
        defines: Vec<(String, i32)>,
        /// One pair, optional
        #[arg(long, value_parser = parse_key_val)]
        one: Option<(String, i32)>,
    }

    #[test]
    fn each_value_is_a_string_the_parser_reads() {
        let catalog = Define::catalog();
        let tool = catalog.get("define").unwrap();
        let schema = serde_json::Value::Object(tool.input_schema().as_ref().clone());
        assert_eq!(schema["properties"]["defines"]["type"], "array", "{schema}");
        assert_eq!(schema["properties"]["defines"]["items"], json!({"type": "string"}), "{schema}");
        assert_eq!(schema["properties"]["one"]["type"], "string", "{schema}");
        let argv =
            tool.argv(json!({"defines": ["a=1", "-b=-2"], "one": "x=3"}).as_object().unwrap()).unwrap();
        assert_eq!(argv, ["-D=a=1", "-D=-b=-2", "--one=x=3"]);
        let parsed = Define::try_parse_from(std::iter::once("define".to_owned()).chain(argv)).unwrap();
        assert_eq!(
            parsed,
            Define { defines: vec![("a".into(), 1), ("-b".into(), -2)], one: Some(("x".into(), 3)) }
        );
        let err = tool.argv(json!({"defines": [["a", 1]]}).as_object().unwrap()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "tool `define`: argument `defines`: expected an array of strings, got an array"
        );
    }
}
