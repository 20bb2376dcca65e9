//! Which Wayland session a leaf drives ([`Session`]): this machine's (target `.`) or the one
//! inside a box's running container, found from the host without running anything in it.
//!
//! REFERENCE.md §15 exports `XDG_RUNTIME_DIR` (default `/tmp`), `WAYLAND_DISPLAY` (default
//! `wayland-0`) and the newest `/tmp/sway-ipc.*.sock` as `SWAYSOCK` in every shell snippet.
//! charly finds the same three, and `DISPLAY` for XWayland, by looking at what listens:
//!
//! - **A box** `web` (`-i 2`): its container `charly-web[-2]` must run and be the box's own
//!   (its labels, [`crate::engine::claim`]); one `podman container inspect` gives its main
//!   process and environment. The container's listening unix sockets (`/proc/<pid>/net/unix`:
//!   its network namespace) name the compositor's `wayland-N` socket with its directory (the
//!   session's `XDG_RUNTIME_DIR`), sway's `sway-ipc.<uid>.<pid>.sock` and the XWayland
//!   `/tmp/.X11-unix/X<n>` sockets. The container's own `XDG_RUNTIME_DIR`, `WAYLAND_DISPLAY`,
//!   `SWAYSOCK` and `DISPLAY`, when set, choose among several. The host reaches those files
//!   through the container's root, `/proc/<pid>/root` (as [`crate::dbus::container`] reaches a
//!   box's bus): sway's IPC socket is spoken to from there directly.
//! - **This machine** (`.`): charly's own `XDG_RUNTIME_DIR` (else `/run/user/<uid>`, else
//!   `/tmp`), `WAYLAND_DISPLAY` (else the lowest `wayland-N` socket there) and `SWAYSOCK` (else a
//!   `sway-ipc.*.sock` there or in `/tmp` whose sway runs). The machine's socket table is not
//!   scanned: other people's desktops listen there too.
//!
//! `DISPLAY`, when not set, is the XWayland socket sway itself holds (its descriptors matched
//! against the socket table), so a lazily started XWayland is found before it runs. The tools
//! run as the user that owns the Wayland socket (the desktop's user), with the session's
//! `HOME`, `DBUS_SESSION_BUS_ADDRESS` and `XAUTHORITY` as sway's own environment has them.
//!
//! A container's session is cached for the process (an MCP server resolves it once): an entry
//! holds while the container's main process is the same (its pid and start time) and the
//! sockets it names still exist; anything else resolves again.

use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;

use super::WlError;
use crate::engine::{ContainerSummary, Engine, EngineError, Owner, Target, claim};

/// Where the session is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// This machine.
    Local,
    /// A running container.
    Container {
        /// `charly-<box>[-<instance>]`.
        container: String,
        /// Its main process as the host sees it (its root is `/proc/<pid>/root`).
        pid: u32,
        /// The box and `-i` as charly's commands take them (`web -i 2`), for hints.
        fix: String,
    },
}

/// A Wayland session: where it is, its sockets (paths as the target sees them) and whose it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    /// This machine or a container.
    pub place: Place,
    /// The directory of the Wayland socket (the session's `XDG_RUNTIME_DIR`).
    pub runtime_dir: String,
    /// The socket's name in it (`wayland-1`): `WAYLAND_DISPLAY`.
    pub wayland_display: String,
    /// sway's IPC socket (`SWAYSOCK`), when the compositor is sway.
    pub sway_socket: Option<String>,
    /// XWayland's display (`:0`), when there is one.
    pub display: Option<String>,
    /// The owner of the Wayland socket: the tools run as this user.
    pub uid: u32,
    /// Its group.
    pub gid: u32,
    /// `HOME`, `DBUS_SESSION_BUS_ADDRESS`, `XAUTHORITY` of the session, when known.
    pub extra_env: Vec<(String, String)>,
    /// `PATH`, `LANG`, `USER`, `LOGNAME`, `SHELL` of sway's own environment, when known: what a
    /// program started on this machine as the desktop's user gets in place of charly's.
    pub user_env: Vec<(String, String)>,
}

/// The variables the tools get besides the sockets, read from sway's environment (else the
/// container's).
const SESSION_VARS: [&str; 3] = ["HOME", "DBUS_SESSION_BUS_ADDRESS", "XAUTHORITY"];

/// The variables of [`Session::user_env`].
const USER_VARS: [&str; 5] = ["PATH", "LANG", "USER", "LOGNAME", "SHELL"];

impl Session {
    /// The target's root as the host sees it: `/`, or `/proc/<pid>/root`.
    pub fn root(&self) -> PathBuf {
        match &self.place {
            Place::Local => PathBuf::from("/"),
            Place::Container { pid, .. } => PathBuf::from(format!("/proc/{pid}/root")),
        }
    }

    /// `inner` (a path inside the target) as the host reaches it.
    pub fn host_path(&self, inner: &str) -> PathBuf {
        self.root().join(inner.trim_start_matches('/'))
    }

    /// The Wayland socket inside the target: `<runtime_dir>/<wayland_display>`.
    pub fn wayland_socket(&self) -> String {
        format!("{}/{}", self.runtime_dir.trim_end_matches('/'), self.wayland_display)
    }

    /// `container charly-web` or `this machine`, for messages.
    pub fn describe(&self) -> String {
        match &self.place {
            Place::Local => "this machine".into(),
            Place::Container { container, .. } => format!("container {container}"),
        }
    }

    /// `in container charly-web` or `on this machine`, for messages.
    pub fn at(&self) -> String {
        match &self.place {
            Place::Local => "on this machine".into(),
            Place::Container { container, .. } => format!("in container {container}"),
        }
    }

    /// The environment the tools run with: `XDG_RUNTIME_DIR`, `WAYLAND_DISPLAY`, `SWAYSOCK`
    /// and `DISPLAY` when known, then [`Session::extra_env`].
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("XDG_RUNTIME_DIR".to_owned(), self.runtime_dir.clone()),
            ("WAYLAND_DISPLAY".to_owned(), self.wayland_display.clone()),
        ];
        if let Some(sock) = &self.sway_socket {
            env.push(("SWAYSOCK".into(), sock.clone()));
        }
        if let Some(display) = &self.display {
            env.push(("DISPLAY".into(), display.clone()));
        }
        env.extend(self.extra_env.iter().cloned());
        env
    }

    /// The `sway-ipc.<uid>.<pid>.sock`'s pid: sway's process in the target's pid namespace.
    pub fn sway_pid(&self) -> Option<u32> {
        self.sway_socket.as_deref().and_then(sway_pid_of)
    }
}

/// The session `target` names: `.` (this machine), or box `target` (instance `instance`),
/// whose container must be running and be the box's own.
///
/// # Errors
///
/// [`WlError::Engine`] (a bad name, no container: how to start it, not running, another box's),
/// [`WlError::NoSession`] when no compositor listens there.
pub async fn resolve(engine: &Engine, target: &str, instance: Option<&str>) -> Result<Session, WlError> {
    if target == "." {
        if instance.is_some() {
            return Err(WlError::Usage(
                "--instance names a box's container; the target `.` is this machine".into(),
            ));
        }
        return local();
    }
    let t = Target::new(target, instance)?;
    container(engine, &t.container, Some(&t)).await
}

/// The session in container `name`, checked to be `claim`'s own when given (a plan's venue
/// was checked when the plan started).
///
/// # Errors
///
/// As [`resolve`].
pub async fn container(engine: &Engine, name: &str, claim: Option<&Target>) -> Result<Session, WlError> {
    if let Some(hit) = cached(name, claim) {
        return Ok(hit);
    }
    let out = engine.output(&["container", "inspect", name], None, false).await?;
    if out.status != 0 {
        if out.stderr.contains("no such container") {
            return Err(match claim {
                Some(t) => engine.missing(t).into(),
                None => WlError::NoSession(format!("container {name} does not exist")),
            });
        }
        let why = out.stderr.lines().rfind(|l| !l.trim().is_empty()).unwrap_or_default().to_owned();
        return Err(EngineError::Failed {
            command: format!("{} container inspect {name}", engine.program()),
            status: out.status,
            stderr: why.trim_start_matches("Error: ").to_owned(),
        }
        .into());
    }
    let parsed: Value = serde_json::from_str(&out.stdout).map_err(|e| EngineError::Output {
        command: format!("{} container inspect {name}", engine.program()),
        message: e.to_string(),
    })?;
    let first = parsed.get(0).cloned().unwrap_or(Value::Null);
    let labels = first
        .pointer("/Config/Labels")
        .and_then(Value::as_object)
        .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect())
        .unwrap_or_default();
    let summary = ContainerSummary {
        names: vec![name.to_owned()],
        state: first.pointer("/State/Status").and_then(Value::as_str).unwrap_or_default().to_owned(),
        exit_code: first.pointer("/State/ExitCode").and_then(Value::as_i64).unwrap_or(0) as i32,
        labels: Some(labels),
        ..ContainerSummary::default()
    };
    let fix = match claim {
        Some(t) => {
            claim::check_container(t, &summary)?;
            format!("{}{}", t.box_name, t.instance_flag())
        }
        None => name.strip_prefix("charly-").unwrap_or(name).to_owned(),
    };
    let pid = first.pointer("/State/Pid").and_then(Value::as_u64).unwrap_or(0) as u32;
    if pid == 0 || !summary.is_running() {
        return Err(match claim {
            Some(t) => crate::engine::not_running(t, &summary).into(),
            None => WlError::NoSession(format!("container {name} is not running")),
        });
    }
    let env: BTreeMap<String, String> = first
        .pointer("/Config/Env")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect()
        })
        .unwrap_or_default();
    let place = Place::Container { container: name.to_owned(), pid, fix };
    let session = discover(place, &env)?;
    remember(name, pid, summary.labels.clone().unwrap_or_default(), &session);
    Ok(session)
}

/// This machine's session, from charly's environment.
///
/// # Errors
///
/// [`WlError::NoSession`] when no Wayland socket is found.
pub fn local() -> Result<Session, WlError> {
    let env: BTreeMap<String, String> = std::env::vars().collect();
    discover(Place::Local, &env)
}

/// A listening unix socket of a socket table.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Listening {
    path: String,
    inode: u64,
}

/// The listening path sockets of a `/proc/<pid>/net/unix` table (abstract ones left out).
fn listening(table: &str) -> Vec<Listening> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            // Num RefCount Protocol Flags Type St Inode Path; Flags 00010000 = listening.
            let flags = u32::from_str_radix(f.get(3)?, 16).ok()?;
            let path = f.get(7)?;
            (flags & 0x10000 != 0 && path.starts_with('/'))
                .then(|| Some(Listening { path: (*path).to_owned(), inode: f.get(6)?.parse().ok()? }))?
        })
        .collect()
}

fn split(path: &str) -> (&str, &str) {
    path.rsplit_once('/').map_or(("", path), |(d, n)| (if d.is_empty() { "/" } else { d }, n))
}

/// `wayland-<N>`'s N.
fn wayland_number(name: &str) -> Option<u32> {
    name.strip_prefix("wayland-")?.parse().ok()
}

/// `sway-ipc.<uid>.<pid>.sock`'s pid.
fn sway_pid_of(path: &str) -> Option<u32> {
    let name = split(path).1.strip_prefix("sway-ipc.")?.strip_suffix(".sock")?;
    name.rsplit('.').next()?.parse().ok()
}

fn is_socket(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

/// Finds the session's sockets in `place`, whose environment is `env`.
fn discover(place: Place, env: &BTreeMap<String, String>) -> Result<Session, WlError> {
    let get = |k: &str| env.get(k).filter(|v| !v.is_empty()).cloned();
    let mut session = Session {
        place,
        runtime_dir: String::new(),
        wayland_display: String::new(),
        sway_socket: None,
        display: None,
        uid: 0,
        gid: 0,
        extra_env: Vec::new(),
        user_env: Vec::new(),
    };
    let (proc_dir, table) = match &session.place {
        Place::Local => (PathBuf::from("/proc"), None),
        Place::Container { pid, .. } => (
            session.host_path("/proc"),
            std::fs::read_to_string(format!("/proc/{pid}/net/unix")).ok().map(|t| listening(&t)),
        ),
    };
    let runtime_env = get("XDG_RUNTIME_DIR");
    let wayland = match &table {
        Some(table) => {
            let mut found: Vec<&Listening> =
                table.iter().filter(|l| wayland_number(split(&l.path).1).is_some()).collect();
            if let Some(display) = get("WAYLAND_DISPLAY") {
                found.retain(|l| {
                    l.path == display
                        || (split(&l.path).1 == display
                            && runtime_env
                                .as_deref()
                                .is_none_or(|d| split(&l.path).0 == d.trim_end_matches('/')))
                });
            } else if let Some(dir) = &runtime_env {
                let in_dir: Vec<&Listening> =
                    found.iter().copied().filter(|l| split(&l.path).0 == dir.trim_end_matches('/')).collect();
                if !in_dir.is_empty() {
                    found = in_dir;
                }
            }
            let has_sway =
                |dir: &str| table.iter().any(|l| split(&l.path).0 == dir && sway_pid_of(&l.path).is_some());
            found.sort_by_key(|l| (!has_sway(split(&l.path).0), wayland_number(split(&l.path).1)));
            found.first().map(|l| l.path.clone())
        }
        None => local_wayland(&session, env),
    };
    let Some(wayland) = wayland else {
        return Err(WlError::NoSession(no_session(&session, env)));
    };
    let (dir, name) = split(&wayland);
    session.runtime_dir = dir.to_owned();
    session.wayland_display = name.to_owned();
    let meta = std::fs::metadata(session.host_path(&wayland)).map_err(|e| {
        WlError::NoSession(format!("the Wayland socket {wayland} {} cannot be used: {e}", session.at()))
    })?;
    (session.uid, session.gid) = (meta.uid(), meta.gid());
    // On this machine SWAYSOCK is the caller's own choice: one that names no socket is an
    // error, not a reason to drive another sway found elsewhere (a box's environment may hold
    // a stale one, and is looked past).
    if let (Place::Local, Some(sock)) = (&session.place, get("SWAYSOCK"))
        && !is_socket(&session.host_path(&sock))
    {
        return Err(WlError::NoSession(format!(
            "SWAYSOCK={sock:?} names no socket on this machine: point it at sway's IPC socket \
             (`sway-ipc.<uid>.<pid>.sock` in sway's XDG_RUNTIME_DIR), or unset it to let charly find the one \
             beside {wayland}"
        )));
    }
    session.sway_socket = sway_socket(&session, table.as_deref(), get("SWAYSOCK"), &proc_dir);
    let sway_env: BTreeMap<String, String> = session
        .sway_pid()
        .and_then(|p| std::fs::read(proc_dir.join(p.to_string()).join("environ")).ok())
        .map(|bytes| {
            bytes
                .split(|b| *b == 0)
                .filter_map(|kv| std::str::from_utf8(kv).ok()?.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect()
        })
        .unwrap_or_default();
    session.display = get("DISPLAY").or_else(|| xwayland_display(&session, table.as_deref(), &proc_dir));
    for key in SESSION_VARS {
        let value = sway_env.get(key).cloned().or_else(|| match session.place {
            Place::Container { .. } => get(key),
            Place::Local => None,
        });
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            session.extra_env.push((key.to_owned(), v));
        }
    }
    session.user_env = USER_VARS
        .iter()
        .filter_map(|key| {
            sway_env.get(*key).filter(|v| !v.is_empty()).map(|v| ((*key).to_owned(), v.clone()))
        })
        .collect();
    Ok(session)
}

/// This machine's Wayland socket: `WAYLAND_DISPLAY` (a name in the runtime directory or an
/// absolute path), else the lowest `wayland-N` socket of the runtime directory.
fn local_wayland(session: &Session, env: &BTreeMap<String, String>) -> Option<String> {
    let dir = local_runtime_dir(session, env);
    if let Some(display) = env.get("WAYLAND_DISPLAY").filter(|v| !v.is_empty()) {
        let path = if display.starts_with('/') { display.clone() } else { format!("{dir}/{display}") };
        return is_socket(&session.host_path(&path)).then_some(path);
    }
    let mut found: Vec<(u32, String)> = std::fs::read_dir(session.host_path(&dir))
        .ok()?
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            Some((wayland_number(&name)?, format!("{dir}/{name}")))
        })
        .filter(|(_, p)| is_socket(&session.host_path(p)))
        .collect();
    found.sort();
    found.into_iter().next().map(|(_, p)| p)
}

/// `XDG_RUNTIME_DIR`, else `/run/user/<uid>` when it exists, else `/tmp`.
fn local_runtime_dir(session: &Session, env: &BTreeMap<String, String>) -> String {
    if let Some(dir) = env.get("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        return dir.trim_end_matches('/').to_owned();
    }
    // /proc/self belongs to the process's effective uid.
    let uid = std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(0);
    let user = format!("/run/user/{uid}");
    if session.place == Place::Local && Path::new(&user).is_dir() { user } else { "/tmp".into() }
}

/// sway's IPC socket: `SWAYSOCK` when it exists, else a `sway-ipc.*.sock` in the session's
/// runtime directory (then `/tmp`) whose sway runs, the newest first.
fn sway_socket(
    session: &Session,
    table: Option<&[Listening]>,
    env_sock: Option<String>,
    proc_dir: &Path,
) -> Option<String> {
    if let Some(sock) = env_sock.filter(|s| is_socket(&session.host_path(s))) {
        return Some(sock);
    }
    let alive = |p: &str| sway_pid_of(p).is_some_and(|pid| proc_dir.join(pid.to_string()).exists());
    for dir in [session.runtime_dir.as_str(), "/tmp"] {
        let mut found: Vec<String> = match table {
            Some(table) => table.iter().filter(|l| split(&l.path).0 == dir).map(|l| l.path.clone()).collect(),
            None => std::fs::read_dir(session.host_path(dir))
                .map(|rd| {
                    rd.filter_map(|e| Some(format!("{dir}/{}", e.ok()?.file_name().into_string().ok()?)))
                        .collect()
                })
                .unwrap_or_default(),
        };
        found.retain(|p| sway_pid_of(p).is_some() && alive(p) && is_socket(&session.host_path(p)));
        let modified = |p: &String| std::fs::metadata(session.host_path(p)).and_then(|m| m.modified()).ok();
        found.sort_by_key(|p| std::cmp::Reverse(modified(p)));
        if let Some(first) = found.into_iter().next() {
            return Some(first);
        }
    }
    None
}

/// The XWayland display sway holds a listening socket of (`/tmp/.X11-unix/X<n>` → `:n`); in a
/// container, else its only X socket.
fn xwayland_display(session: &Session, table: Option<&[Listening]>, proc_dir: &Path) -> Option<String> {
    let number = |path: &str| path.strip_prefix("/tmp/.X11-unix/X")?.parse::<u32>().ok();
    let owned = table.map(<[Listening]>::to_vec).or_else(|| {
        let pid = session.sway_pid()?;
        std::fs::read_to_string(proc_dir.join(pid.to_string()).join("net/unix")).ok().map(|t| listening(&t))
    })?;
    let x_sockets: Vec<&Listening> = owned.iter().filter(|l| number(&l.path).is_some()).collect();
    if let Some(pid) = session.sway_pid() {
        let fds: Vec<u64> = std::fs::read_dir(proc_dir.join(pid.to_string()).join("fd"))
            .map(|rd| {
                rd.filter_map(|e| {
                    let link = std::fs::read_link(e.ok()?.path()).ok()?;
                    link.to_str()?.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
                })
                .collect()
            })
            .unwrap_or_default();
        if let Some(held) = x_sockets.iter().find(|l| fds.contains(&l.inode)) {
            return number(&held.path).map(|n| format!(":{n}"));
        }
    }
    match (&session.place, x_sockets.as_slice()) {
        (Place::Container { .. }, [only]) => number(&only.path).map(|n| format!(":{n}")),
        _ => None,
    }
}

/// Why no session was found, and where charly looked.
fn no_session(session: &Session, env: &BTreeMap<String, String>) -> String {
    let set = |k: &str| env.get(k).map(|v| format!("{k}={v:?}")).unwrap_or_else(|| format!("{k} unset"));
    match &session.place {
        Place::Local => format!(
            "no Wayland compositor for this machine: no wayland-N socket in {} ({}, {}); set \
             XDG_RUNTIME_DIR and WAYLAND_DISPLAY to the session's (the directory and name of its socket)",
            local_runtime_dir(session, env),
            set("XDG_RUNTIME_DIR"),
            set("WAYLAND_DISPLAY")
        ),
        Place::Container { container, fix, .. } => format!(
            "no Wayland compositor listens in container {container}: no wayland-N socket among its \
             listening sockets ({}, {} in its environment); is the compositor running \
             (`charly cmd {fix} 'grep -lx sway /proc/[0-9]*/comm'` lists its process, `charly logs {fix}` \
             says why it stopped)?",
            set("XDG_RUNTIME_DIR"),
            set("WAYLAND_DISPLAY")
        ),
    }
}

/// A container's session and what it was checked against.
struct Cached {
    pid: u32,
    started: u64,
    labels: BTreeMap<String, String>,
    session: Session,
}

fn cache() -> &'static Mutex<HashMap<String, Cached>> {
    static CACHE: std::sync::OnceLock<Mutex<HashMap<String, Cached>>> = std::sync::OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks since boot.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(19)?.parse().ok()
}

/// The cached session of container `name` while its main process and sockets are the same.
fn cached(name: &str, claim: Option<&Target>) -> Option<Session> {
    let map = cache().lock().unwrap_or_else(|e| e.into_inner());
    let hit = map.get(name)?;
    let current = start_time(hit.pid) == Some(hit.started)
        && is_socket(&hit.session.host_path(&hit.session.wayland_socket()))
        && hit.session.sway_socket.as_deref().is_none_or(|s| is_socket(&hit.session.host_path(s)))
        && claim.is_none_or(|t| Owner::of(&hit.labels, t, true) == Owner::Ours);
    current.then(|| hit.session.clone())
}

fn remember(name: &str, pid: u32, labels: BTreeMap<String, String>, session: &Session) {
    if let Some(started) = start_time(pid) {
        let entry = Cached { pid, started, labels, session: session.clone() };
        cache().lock().unwrap_or_else(|e| e.into_inner()).insert(name.to_owned(), entry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "Num       RefCount Protocol Flags    Type St Inode Path
0000000091d00cf0: 00000002 00000000 00010000 0001 01 96660 /run/user/1000/wayland-1
00000000d59f05c3: 00000002 00000000 00010000 0001 01 96661 /run/user/1000/sway-ipc.1000.7.sock
00000000ea87af1a: 00000002 00000000 00010000 0001 01 96664 /tmp/.X11-unix/X0
0000000039d1c570: 00000002 00000000 00010000 0001 01 96663 @/tmp/.X11-unix/X0
0000000039d1c571: 00000003 00000000 00000000 0001 03 96665 /run/user/1000/wayland-1
";

    #[test]
    fn the_socket_table_gives_the_listening_path_sockets() {
        let found = listening(TABLE);
        let paths: Vec<&str> = found.iter().map(|l| l.path.as_str()).collect();
        assert_eq!(
            paths,
            ["/run/user/1000/wayland-1", "/run/user/1000/sway-ipc.1000.7.sock", "/tmp/.X11-unix/X0"]
        );
        assert_eq!(found[2].inode, 96664);
        assert_eq!(sway_pid_of("/run/user/1000/sway-ipc.1000.7.sock"), Some(7));
        assert_eq!(sway_pid_of("/run/user/1000/wayland-1"), None);
        assert_eq!(wayland_number("wayland-12"), Some(12));
        assert_eq!(wayland_number("wayland-1.lock"), None);
        assert_eq!(split("/tmp/x"), ("/tmp", "x"));
        assert_eq!(split("/x"), ("/", "x"));
    }
}
