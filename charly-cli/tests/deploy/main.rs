//! The lifecycle leaves against real podman (4.3 with runc, the busybox base image that
//! `scripts/runtimes.sh` builds): each test has its own project and box `test-<what>`, and
//! removes the containers, volumes and images it made by name when it ends.

mod util;

/// `start`, `status`, `logs`, `stop`, `remove`: one container's whole life.
mod lifecycle;

/// `cmd`, `shell`: output, exit status, disposable containers, never a TTY as a tool.
mod exec;

/// The bad input and faults that these leaves meet.
mod faults;

/// `config setup` (secrets, volumes, ports, quadlet units), `config status`, `config remove`.
mod config;

/// `service.*`: supervisorctl in a Debian box's container.
mod service;

/// A direct `start` runs with what `config setup` wrote into the deploy entry.
mod entry;

/// Names that collide (`charly-a-b-c` of box `a` instance `b-c` and box `a-b` instance `c`),
/// containers charly did not create, purge by labels, nothing left by a failed start.
mod claim;

/// Faults of a fresh user's trial: wording, supervisord logs, `check live -i`, secrets, remaps.
mod trial;

/// The end-to-end case: charly serving itself from a box, proven by `check live`.
mod e2e;

/// The fixes "not published" and "no bus address" errors print, run as printed.
mod publish;

/// The config hints (`-i` of encrypted volumes, `secret-tool` for the keyring), run as printed.
mod hints;

/// tests/hoststate's private session bus with gnome-keyring-daemon.
#[allow(dead_code, unreachable_pub)]
#[path = "../hoststate/util.rs"]
mod hoststate;

/// What charly starts in a container stops with it; a container that exits at once is an error.
mod stopping;

/// Hooks within a time limit (`--hook-timeout`, `--no-hooks`).
mod hooks;

/// `update` recreates the container as a start with the same flags would run it now.
mod update;

/// Instances kept apart: encrypted directories and passphrases, quadlet units and run mode.
mod instances;

/// Data seeding over the image's own files, once; `post_enable` once per container made.
mod seeding;

/// A `--filter` that selects nothing, unknown variables, the box's env in disposable containers.
mod checking;

/// Issue 14's second trial: entry values, env files, names, status hints, whole stderr lines.
mod retrial;

/// LOW findings of issue 14's first trial: a build prunes the box's dangling images.
mod lows;
