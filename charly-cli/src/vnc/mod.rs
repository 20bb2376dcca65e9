//! `check.vnc.*`: a VNC server driven over RFB 3.8 (RFC 6143; REFERENCE.md §16).
//!
//! **Where the server is** ([`resolve`]): `.` is this machine at `--vnc-addr` (default
//! `127.0.0.1:5900`); a box is its running container `charly-<box>[-<instance>]`, dialled at
//! the host port `podman port` gives for container port 5900 (`0.0.0.0`/`[::]` become
//! `127.0.0.1`), or 127.0.0.1:5900 under `--network host`.
//!
//! **TLS** ([`tls`]): a VeNCrypt server's certificate is checked against the system's roots and
//! `--ca-file`, for the host of the address dialled; `--insecure` skips the check.
//!
//! **Password** ([`password`]): `VNC_PASSWORD`, else the credential store's `charly/vnc`
//! entry `<box>-<instance>`, then `<box>` (`.` for this machine); only asked for when the server
//! offers VNC authentication and not None.
//!
//! **The wire** ([`rfb`]): a blocking client run off the async runtime, the whole call
//! (connect, handshake, every message) bounded by `--timeout` ([`sock`]). Security VeNCrypt
//! (X509 sub-types over rustls, [`tls`]), None and VNC authentication; ZRLE and Raw
//! ([`zrle`]); PNG ([`frame`]); desktops up to [`rfb::MAX_PIXELS`].
//!
//! **Input** calls end with a round trip ([`Client::sync`]): they return once the server has
//! taken every event, so the events of back-to-back calls arrive in call order.
//!
//! | leaf | what it sends | report |
//! |---|---|---|
//! | `status` | handshake only | [`VncStatus`] |
//! | `screenshot [FILE]` | a full FramebufferUpdateRequest | [`Screenshot`] (`image` over MCP) |
//! | `click X Y`, `mouse X Y` | PointerEvents | [`VncInput`] |
//! | `type TEXT`, `key NAME` | KeyEvents down and up ([`keys`]) | [`VncInput`] |
//! | `rfb METHOD [PARAMS]` | key, pointer, cut-text, fbupdate-request | [`VncInput`] |
//! | `passwd` | stores a password | [`VncPasswd`] |

pub mod auth;
mod error;
pub mod frame;
pub mod keys;
mod report;
pub mod rfb;
pub mod sock;
pub mod tls;
pub mod zrle;

use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub use error::VncError;
pub use frame::Framebuffer;
pub use report::{Screenshot, VncInput, VncPasswd, VncStatus};
pub use rfb::{Client, ServerInfo};
pub use tls::Stream;

use crate::engine::{Engine, Target};
use crate::report::{Reply, Report};

/// The address `.` means without `--vnc-addr`.
pub const DEFAULT_ADDR: &str = "127.0.0.1:5900";
/// The container port a box's VNC server listens on.
pub const CONTAINER_PORT: u16 = 5900;
/// How long the TCP connect may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// A mouse button of `click` (RFB button mask bit).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, schemars::JsonSchema, serde::Serialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Button {
    /// Mask 1.
    #[default]
    Left,
    /// Mask 2.
    Middle,
    /// Mask 4.
    Right,
}

impl Button {
    /// The RFB button mask.
    pub fn mask(self) -> u8 {
        match self {
            Button::Left => 1,
            Button::Middle => 2,
            Button::Right => 4,
        }
    }
}

/// One `check.vnc.*` operation (not `passwd`, which needs no server).
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum Op {
    Status,
    Screenshot { file: Option<PathBuf>, shown: Option<String> },
    Click { x: u16, y: u16, button: Button },
    Mouse { x: u16, y: u16 },
    Type { text: String },
    Key { name: String },
    Rfb { method: String, params: Option<String> },
}

/// A resolved server: where it is and which credential is its.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    /// `host:port`.
    pub addr: String,
    /// The target as given, for messages (`.` or the box).
    pub target: String,
    /// Credential keys to try, most specific first.
    pub keys: Vec<String>,
    /// How a VeNCrypt server's certificate is checked (`--ca-file`, `--insecure`).
    pub tls: charly::client::TlsOptions,
}

impl Server {
    /// `addr` for `target`, with credential keys `keys` and default TLS checks.
    pub fn new(addr: impl Into<String>, target: impl Into<String>, keys: Vec<String>) -> Self {
        Server { addr: addr.into(), target: target.into(), keys, tls: Default::default() }
    }

    /// What to check when nothing answers at [`Server::addr`]: for `.` whether a VNC server
    /// listens there and how to name another address; for a box (its container runs and its
    /// port is published, else [`resolve`] said so) whether its VNC server runs.
    pub fn unreachable_hint(&self) -> String {
        if self.target == "." {
            format!(
                "is a VNC server listening at {} on this machine? Another address: --vnc-addr HOST:PORT \
                 (vnc_addr over MCP and in plans)",
                self.addr
            )
        } else {
            format!(
                "the box's container runs and publishes port {CONTAINER_PORT}, but nothing answers: is its VNC \
                 server running (`charly service status {}`)?",
                self.target
            )
        }
    }
}

/// The credential key of a target: `<box>-<instance>`, `<box>`, or `.`.
pub fn credential_keys(target: &str, instance: Option<&str>) -> Vec<String> {
    match instance {
        Some(i) => vec![format!("{target}-{i}"), target.to_owned()],
        None => vec![target.to_owned()],
    }
}

/// Where the VNC server of `target` is.
///
/// # Errors
///
/// [`VncError::Target`]: the box is not running, or its port 5900 is not published (saying
/// how to publish it); [`VncError::Usage`]: `-i` with `.`, or `vnc_addr` with a box (whose
/// server is at its published port, not there).
pub async fn resolve(
    engine: &Engine,
    target: &str,
    instance: Option<&str>,
    vnc_addr: Option<&str>,
) -> Result<Server, VncError> {
    let keys = credential_keys(target, instance);
    if target == "." {
        if let Some(why) = crate::resolve::instance_on_local(instance) {
            return Err(VncError::Usage(why));
        }
        return Ok(Server::new(vnc_addr.unwrap_or(DEFAULT_ADDR), target, keys));
    }
    if let Some(why) =
        crate::resolve::endpoint_on_box("--vnc-addr", "vnc_addr", vnc_addr, target, CONTAINER_PORT)
    {
        return Err(VncError::Usage(why));
    }
    let t = Target::new(target, instance).map_err(|e| VncError::Target(e.to_string()))?;
    engine.running(&t).await.map_err(|e| VncError::Target(e.to_string()))?;
    let addr = published(engine, &t.container, Some(&t)).await?;
    Ok(Server::new(addr, format!("{}{}", t.box_name, t.instance_flag()), keys))
}

/// The host address of a running `container`'s VNC port (`podman port`, or 127.0.0.1:5900
/// under `--network host`); `who` is its box (and `-i`) for the fix in the error (`None`: read
/// from the container's labels).
///
/// # Errors
///
/// [`VncError::Target`]: port 5900 is not published (saying how to publish it), or the
/// engine failed.
pub async fn published(engine: &Engine, container: &str, who: Option<&Target>) -> Result<String, VncError> {
    let port = engine
        .output(&["port", container, "5900/tcp"], None, false)
        .await
        .map_err(|e| VncError::Target(e.to_string()))?;
    let mapped = port.stdout.lines().map(str::trim).find(|l| !l.is_empty()).map(normalise);
    Ok(match mapped {
        Some(a) if port.status == 0 => a,
        _ => {
            let mode = engine
                .query(&["inspect", "--format", "{{.HostConfig.NetworkMode}}", container])
                .await
                .map_err(|e| VncError::Target(e.to_string()))?;
            if mode.trim() != "host" {
                let (box_name, instance) = match who {
                    Some(t) => (t.box_name.clone(), t.instance.clone()),
                    None => engine.target_of(container).await,
                };
                let now = engine
                    .output(&["port", container], None, false)
                    .await
                    .map(|o| o.stdout)
                    .unwrap_or_default();
                let kept = crate::resolve::published_specs(&now);
                return Err(VncError::Target(format!(
                    "container {container} publishes no host port for VNC's container port {CONTAINER_PORT} (and \
                     does not run with --network host): {}",
                    crate::resolve::publish_hint_keeping(
                        &box_name,
                        instance.as_deref(),
                        CONTAINER_PORT,
                        &kept
                    )
                )));
            }
            format!("127.0.0.1:{CONTAINER_PORT}")
        }
    })
}

fn normalise(addr: &str) -> String {
    match addr.rsplit_once(':') {
        Some(("0.0.0.0" | "[::]" | "::", port)) => format!("127.0.0.1:{port}"),
        _ => addr.to_owned(),
    }
}

/// A password for VNC authentication and where it came from.
#[derive(Clone, Debug)]
pub struct Password {
    /// The password.
    pub value: String,
    /// Where it came from and how to change it, for a refused password
    /// ([`VncError::with_password_from`]): `VNC_PASSWORD`, or the stored `charly/vnc/<key>`.
    pub from: String,
}

/// The password for `server`: `VNC_PASSWORD` (when set and not empty), else the store's
/// `charly/vnc/<key>` for each key (an empty `VNC_PASSWORD` is said in [`Password::from`]).
pub fn password(store: &crate::credentials::Store, server: &Server) -> Option<Password> {
    if let Some(value) = from_env() {
        return Some(value);
    }
    let (key, value) = server
        .keys
        .iter()
        .find_map(|k| Some((k, store.resolve(None, crate::credentials::VNC_SERVICE, k).value?)))?;
    Some(Password { value, from: stored_at(key, &server.target) })
}

/// `VNC_PASSWORD` when set and not empty.
pub fn from_env() -> Option<Password> {
    let value = std::env::var("VNC_PASSWORD").ok().filter(|v| !v.is_empty())?;
    Some(Password { value, from: "the password is VNC_PASSWORD's: set the right one there".into() })
}

/// [`Password::from`] for the store's `charly/vnc/<key>`.
fn stored_at(key: &str, target: &str) -> String {
    let empty =
        if std::env::var_os("VNC_PASSWORD").is_some() { " (VNC_PASSWORD is set but empty)" } else { "" };
    format!(
        "the password is the one stored as {}/{key}{empty}: replace it with `charly check vnc passwd {target}` \
         (one line on stdin), or set VNC_PASSWORD",
        crate::credentials::VNC_SERVICE
    )
}

/// Connects and runs the handshake: VeNCrypt (TLS, [`tls`]) when offered, else None or VNC
/// authentication. A server that offers VeNCrypt with no sub-type charly speaks and also None
/// or VNC authentication is dialled again without VeNCrypt. The connection's every read and
/// write ends `timeout` from now ([`sock`]).
///
/// # Errors
///
/// [`VncError::Unreachable`] and every handshake error of [`Client::handshake_with`].
pub fn connect(
    server: &Server,
    password: Option<&str>,
    timeout: Duration,
) -> Result<Client<Stream>, VncError> {
    connect_by(server, password, timeout, Instant::now() + timeout)
}

fn connect_by(
    server: &Server,
    password: Option<&str>,
    timeout: Duration,
    deadline: Instant,
) -> Result<Client<Stream>, VncError> {
    let silent = |e: VncError| e.at(&server.addr, timeout);
    let dial = |vencrypt| dial(server, password, deadline, vencrypt).map_err(silent);
    match dial(true) {
        Err(first @ VncError::UnsupportedSecurity { .. }) => match dial(false) {
            Err(VncError::UnsupportedSecurity { .. }) => Err(first),
            other => other,
        },
        other => other,
    }
}

fn dial(
    server: &Server,
    password: Option<&str>,
    deadline: Instant,
    vencrypt: bool,
) -> Result<Client<Stream>, VncError> {
    let unreachable =
        |source| VncError::Unreachable { addr: server.addr.clone(), source, hint: server.unreachable_hint() };
    let sock = server
        .addr
        .to_socket_addrs()
        .map_err(unreachable)?
        .next()
        .ok_or_else(|| unreachable(std::io::Error::other("no address")))?;
    let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
    let stream = TcpStream::connect_timeout(&sock, CONNECT_TIMEOUT.min(left)).map_err(unreachable)?;
    stream.set_nodelay(true).map_err(unreachable)?;
    let stream = sock::Sock::new(stream, deadline);
    let write = stream.try_clone().map_err(unreachable)?;
    let host = server.addr.rsplit_once(':').map_or(server.addr.as_str(), |(h, _)| h).to_owned();
    let user = std::env::var("VNC_USER").unwrap_or_else(|_| "user".into());
    let auth = rfb::Auth { password, user: &user, hint: (&server.addr, &server.target), vencrypt };
    let mut upgrade = tls::upgrader(host, server.tls.clone());
    Client::handshake_with(Stream::Tcp(stream), Stream::Tcp(write), &auth, Some(&mut upgrade))
}

/// Runs `op` against `server` (blocking: call it off the async runtime), all of it within
/// `timeout`. Input (`click`, `mouse`, `type`, `key`, `rfb`) returns once the server answered
/// a round trip after the events ([`Client::sync`]).
///
/// # Errors
///
/// Every [`VncError`]: connection, handshake, decoding, a bad argument (checked before
/// anything is sent; coordinates outside the desktop before any event), the PNG file,
/// [`VncError::Overran`] past `timeout`.
pub fn perform(
    server: &Server,
    password: Option<&str>,
    op: &Op,
    timeout: Duration,
) -> Result<Reply, VncError> {
    perform_at(server, password, op, timeout).map_err(|e| e.at(&server.addr, timeout))
}

fn perform_at(
    server: &Server,
    password: Option<&str>,
    op: &Op,
    timeout: Duration,
) -> Result<Reply, VncError> {
    // Arguments first: bad input sends nothing.
    let keysyms: Vec<u32> = match op {
        Op::Type { text } => {
            text.chars().map(keys::char_keysym).collect::<Result<_, _>>().map_err(VncError::Usage)?
        }
        Op::Key { name } => vec![keys::keysym(name).map_err(VncError::Usage)?],
        _ => Vec::new(),
    };
    let rfb_call = match op {
        Op::Rfb { method, params } => Some(parse_rfb(method, params.as_deref())?),
        _ => None,
    };
    let mut c = connect_by(server, password, timeout, Instant::now() + timeout)?;
    if let Op::Click { x, y, .. } | Op::Mouse { x, y } = op {
        inside(&c.info, *x, *y)?;
    }
    let reply = match op {
        Op::Status => {
            let i = &c.info;
            reply(VncStatus {
                addr: server.addr.clone(),
                version: i.version.clone(),
                name: i.name.clone(),
                width: i.width,
                height: i.height,
                security: match i.subtype {
                    Some(st) => format!("{} {}", rfb::security_name(i.security), tls::subtype_name(st)),
                    None => rfb::security_name(i.security),
                },
                offered: i.offered.iter().map(|&t| rfb::security_name(t)).collect(),
            })
        }
        Op::Screenshot { file, shown } => {
            let fb = c.screenshot()?;
            let png = match file {
                Some(path) => fb.save(path)?,
                None => fb.png()?,
            };
            reply(Screenshot {
                file: shown.clone(),
                bytes: png.len(),
                width: c.info.width.into(),
                height: c.info.height.into(),
                png,
            })
        }
        Op::Click { x, y, button } => {
            c.pointer(*x, *y, 0)?;
            std::thread::sleep(Duration::from_millis(100));
            c.pointer(*x, *y, button.mask())?;
            std::thread::sleep(Duration::from_millis(50));
            c.pointer(*x, *y, 0)?;
            input(format!("Clicked {} at ({x}, {y})", button_name(*button)))
        }
        Op::Mouse { x, y } => {
            c.pointer(*x, *y, 0)?;
            input(format!("Moved the pointer to ({x}, {y})"))
        }
        Op::Type { .. } => {
            for k in &keysyms {
                c.key(*k, true)?;
                c.key(*k, false)?;
            }
            input(format!("Typed {} characters", keysyms.len()))
        }
        Op::Key { name } => {
            c.key(keysyms[0], true)?;
            c.key(keysyms[0], false)?;
            input(format!("Pressed key {name}"))
        }
        Op::Rfb { .. } => match rfb_call.unwrap_or(RfbCall::Update) {
            RfbCall::Key(k, down) => {
                c.key(k, down)?;
                input(format!("KeyEvent {k:#x} {}", if down { "down" } else { "up" }))
            }
            RfbCall::Pointer(x, y, mask) => {
                c.pointer(x, y, mask)?;
                input(format!("PointerEvent ({x}, {y}) mask {mask}"))
            }
            RfbCall::Cut(text) => {
                c.cut_text(&text)?;
                input(format!("ClientCutText of {} characters", text.chars().count()))
            }
            RfbCall::Update => {
                let (w, h) = (c.info.width, c.info.height);
                c.sync(0, 0, w, h)?;
                return Ok(reply(VncInput { done: format!("{w}x{h}"), width: Some(w), height: Some(h) }));
            }
        },
    };
    if !matches!(op, Op::Status | Op::Screenshot { .. }) {
        // Every event taken before the socket closes (a 1x1 update answers).
        let (w, h) = (c.info.width.min(1), c.info.height.min(1));
        c.sync(0, 0, w, h)?;
    }
    Ok(reply)
}

/// `(x, y)` must be a pixel of the desktop `info` describes.
fn inside(info: &ServerInfo, x: u16, y: u16) -> Result<(), VncError> {
    if x < info.width && y < info.height {
        return Ok(());
    }
    Err(VncError::Usage(format!(
        "({x}, {y}) is outside the desktop, which is {}x{} (x 0-{}, y 0-{})",
        info.width,
        info.height,
        info.width.saturating_sub(1),
        info.height.saturating_sub(1)
    )))
}

fn button_name(b: Button) -> &'static str {
    match b {
        Button::Left => "left",
        Button::Middle => "middle",
        Button::Right => "right",
    }
}

fn reply<R: Report>(r: R) -> Reply {
    Reply::new(&r)
}

fn input(done: String) -> Reply {
    reply(VncInput { done, width: None, height: None })
}

enum RfbCall {
    Key(u32, bool),
    Pointer(u16, u16, u8),
    Cut(String),
    Update,
}

fn parse_rfb(method: &str, params: Option<&str>) -> Result<RfbCall, VncError> {
    let v: serde_json::Value = match params {
        Some(p) => {
            serde_json::from_str(p).map_err(|e| VncError::Usage(format!("params {p:?}: not JSON: {e}")))?
        }
        None => serde_json::json!({}),
    };
    let field_u = |name: &str, max: u64| -> Result<u64, VncError> {
        v.get(name).and_then(serde_json::Value::as_u64).filter(|n| *n <= max).ok_or_else(|| {
            VncError::Usage(format!("rfb {method}: params field {name:?} must be an integer 0-{max}"))
        })
    };
    Ok(match method {
        "key" => {
            let k = u32::try_from(field_u("key", u64::from(u32::MAX))?).unwrap_or(0);
            let down = v.get("down").and_then(serde_json::Value::as_bool).ok_or_else(|| {
                VncError::Usage("rfb key: params field \"down\" must be true or false".into())
            })?;
            RfbCall::Key(k, down)
        }
        "pointer" => {
            let x = u16::try_from(field_u("x", 65535)?).unwrap_or(0);
            let y = u16::try_from(field_u("y", 65535)?).unwrap_or(0);
            let mask = if v.get("button").is_some() {
                u8::try_from(field_u("button", 255)?).unwrap_or(0)
            } else {
                0
            };
            RfbCall::Pointer(x, y, mask)
        }
        "cut-text" => RfbCall::Cut(
            v.get("text")
                .and_then(serde_json::Value::as_str)
                .ok_or_else(|| {
                    VncError::Usage("rfb cut-text: params field \"text\" must be a string".into())
                })?
                .to_owned(),
        ),
        "fbupdate-request" => RfbCall::Update,
        other => {
            return Err(VncError::Usage(format!(
                "rfb method {other:?}: expects key, pointer, cut-text or fbupdate-request"
            )));
        }
    })
}
