//! The `charly` command-line tool, as a library.
//!
//! Every command has one shape (DESIGN.md "The command shape"): a function of its parsed
//! arguments and a [`Ctx`] that returns a report ([`report::Report`]) or a [`CommandError`];
//! [`commands::run`] dispatches a parsed [`cli::Cli`] to them. `main` prints the report, and
//! `charly mcp serve` ([`serve`]) returns it as an MCP tool result.
//!
//! | module | what it holds |
//! |---|---|
//! | [`cli`] | the clap command tree, with `#[derive(McpTool)]` |
//! | [`commands`] | dispatch: a parsed command to its domain function and report |
//! | [`report`], [`context`], [`error`] | the command shape: [`report::Report`], [`Ctx`], [`CommandError`] |
//! | [`project`] | projects: boxes, candies, comment-preserving edits, Containerfiles, builds |
//! | [`check`] | YAML check plans: parsing, matchers, running, JUnit XML |
//! | [`probe`] | `check mcp <method>`: one client method against one server |
//! | [`lint`] | `check mcp lint`: a server's tools against what each strict host accepts |
//! | [`hosts`] | `mcp install`/`uninstall`: charly's server entry in a host's own config file |
//! | [`shell`] | `completions`, `man`: shell completion scripts and the man page |
//! | [`deploy`] | the lifecycle leaves: `start`, `stop`, `status`, `logs`, `shell`, `cmd`, `update`, `remove` |
//! | [`deployfile`] | the per-host deploy file `~/.config/charly/charly.yml` and the `deploy.*` leaves |
//! | [`engine`] | the container engine: every podman call, typed, with errors for people |
//! | [`resolve`] | where an MCP server is: `--url`, `.mcp.json`, or a box's image label and container |
//! | [`serve`] | `charly mcp serve` |
//! | [`config`] | per-host settings: config.yml, `.env`, environment, defaults |
//! | [`credentials`] | the credential store: env, Secret Service, KDBX, config file |
//! | [`settings`], [`secrets`], [`gpg`], [`alias`], [`udev`] | the host-state families |
//! | [`hostfile`] | atomic writes and locks for the host's own files |
//! | [`tmux`] | `tmux.*` and `record.*`: tmux sessions and recordings in a box or on this machine |
//! | [`vm`] | `vm.*`: boxes as virtual machines (qemu over QMP, libvirt) |

pub mod alias;
pub mod cdp;
pub mod check;
pub mod cli;
pub mod commands;
pub mod config;
pub mod context;
pub mod credentials;
pub mod dbus;
pub mod deploy;
pub mod deployfile;
pub mod engine;
pub mod error;
pub mod gpg;
pub mod hostfile;
pub mod hosts;
pub mod lint;
pub mod probe;
pub mod project;
pub mod report;
pub mod resolve;
pub mod secrets;
pub mod serve;
pub mod settings;
pub mod setup;
pub mod shell;
pub mod tmux;
pub mod udev;
pub mod vm;
pub mod vnc;
pub mod wl;

pub use context::{Ctx, Scope};
pub use error::CommandError;
