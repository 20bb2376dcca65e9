//! What a box needs when it runs, declared by its candies: the deploy-time node kinds of a
//! candy's file (REFERENCE.md §1, §18.5-§18.7 for what each means; charly's own names and
//! shape), parsed and checked here, merged per box in [`Runtime`], and baked into the image as
//! `ai.opencharly.*` labels (JSON) by `box.generate`.
//!
//! ```yaml
//! # candy/web/charly.yml
//! web-svc:
//!   service:                      # supervisord programs (the box's init)
//!     - {name: httpd, command: "/bin/httpd -f -p 80", user: www-data, autostart: true, env: [A=1]}
//! web-volume:
//!   volume: [{name: data, path: /srv/data}]      # charly-<box>[-<instance>]-data at /srv/data
//! web-env:
//!   env: [LANG=C.UTF-8]
//! web-alias:
//!   alias: [{name: web-logs, command: "tail -f /var/log/web.log"}]
//! web-route:
//!   route: [{host: web.localhost, port: 80, path: /}]
//! web-data:
//!   data: [{volume: data, source: seed, dest: www}]   # candy/web/seed copied into the image
//! web-hook:
//!   hook: {pre_remove: "web-ctl flush", post_enable: "web-ctl warm"}
//! web-security:
//!   security: {user: "1000:1000", cap_add: [NET_BIND_SERVICE], cap_drop: [ALL], read_only: true}
//! ```
//!
//! Each parser returns the values it could read and a problem per thing wrong, worded with
//! the key path (`service[1].user`) and what is allowed; `box.validate` reports them and
//! `box.generate` refuses a box whose candies have any.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where `box.generate` copies a candy's data for seeding: `<DATA_DIR>/<candy>/<index>`.
pub const DATA_DIR: &str = "/usr/share/charly/data";

/// The supervisord configuration charly writes into a box with services.
pub const SUPERVISORD_CONF: &str = "/etc/charly/supervisord.conf";

/// One supervisord program (`service:`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Service {
    /// The program name (`supervisorctl start <name>`).
    pub name: String,
    /// The command line supervisord runs.
    pub command: String,
    /// The user it runs as (default: root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Started with the container (default true).
    #[serde(default = "yes")]
    pub autostart: bool,
    /// `KEY=VALUE` lines for this program only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// The candy that declares it.
    #[serde(default)]
    pub candy: String,
}

fn yes() -> bool {
    true
}

/// A volume the box wants (`volume:`): named volume `charly-<box>[-<instance>]-<name>` at `path`
/// unless the deploy entry binds or encrypts it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VolumeDecl {
    /// The short name.
    pub name: String,
    /// The absolute path in the container.
    pub path: String,
    /// The candy that declares it.
    #[serde(default)]
    pub candy: String,
}

/// A command run in the box under a short name (`alias:`; `charly alias install` writes a host
/// script per alias).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AliasDecl {
    /// The name (a file name: letters, digits, `._+-`).
    pub name: String,
    /// The command run in the container.
    pub command: String,
    /// The candy that declares it.
    #[serde(default)]
    pub candy: String,
}

/// An HTTP route to the box (`route:`): requests for `host` + `path` go to container `port`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Route {
    /// The host name (`web.localhost`).
    pub host: String,
    /// The path prefix (default `/`).
    pub path: String,
    /// The container port.
    pub port: u16,
    /// The candy that declares it.
    #[serde(default)]
    pub candy: String,
}

/// Data seeded into a volume (`data:`): the candy's `source` (a file or directory of the
/// candy) is copied into the image at `staging`, and from there into volume `volume`
/// (under `dest`) when the volume is first used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DataSeed {
    /// The volume it fills (declared by a `volume:` node of the box).
    pub volume: String,
    /// The path in the candy's directory.
    pub source: String,
    /// The directory inside the volume (empty: its root).
    #[serde(default)]
    pub dest: String,
    /// Where the image holds the data (`/usr/share/charly/data/<candy>/<n>`).
    #[serde(default)]
    pub staging: String,
    /// The candy that declares it.
    #[serde(default)]
    pub candy: String,
}

/// Commands run at points of a deployment's life (`hook:`), in candy order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Hooks {
    /// Run in the container before `remove` takes it away.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pre_remove: Vec<String>,
    /// Run in the container once `config setup` has enabled and started it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub post_enable: Vec<String>,
}

impl Hooks {
    fn is_empty(&self) -> bool {
        self.pre_remove.is_empty() && self.post_enable.is_empty()
    }
}

/// How the container is confined (`security:`). Merged over the box's candies: lists are
/// joined (without duplicates), a later candy's scalar replaces an earlier one's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Security {
    /// `podman run --user`: a user name, `UID` or `UID:GID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Capabilities added (`NET_ADMIN`; upper case, without `CAP_`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cap_add: Vec<String>,
    /// Capabilities dropped (`ALL` drops every one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cap_drop: Vec<String>,
    /// A read-only root filesystem (`--read-only`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// `--security-opt no-new-privileges`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_new_privileges: Option<bool>,
    /// `--privileged`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub privileged: Option<bool>,
    /// `--shm-size` (`64m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shm_size: Option<String>,
    /// Absolute paths mounted as tmpfs (writable under a read-only root).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tmpfs: Vec<String>,
    /// Host devices (`/dev/fuse`, `/dev/dri/renderD128:/dev/dri/renderD128:rw`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<String>,
    /// Other `--security-opt` values (`label=disable`, `seccomp=unconfined`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security_opt: Vec<String>,
}

impl Security {
    fn is_empty(&self) -> bool {
        *self == Security::default()
    }

    /// `other` over `self`: lists joined without duplicates, `other`'s scalars win.
    fn merge(&mut self, other: Security) {
        let join = |a: &mut Vec<String>, b: Vec<String>| {
            for item in b {
                if !a.contains(&item) {
                    a.push(item);
                }
            }
        };
        join(&mut self.cap_add, other.cap_add);
        join(&mut self.cap_drop, other.cap_drop);
        join(&mut self.tmpfs, other.tmpfs);
        join(&mut self.devices, other.devices);
        join(&mut self.security_opt, other.security_opt);
        self.user = other.user.or(self.user.take());
        self.read_only = other.read_only.or(self.read_only);
        self.no_new_privileges = other.no_new_privileges.or(self.no_new_privileges);
        self.privileged = other.privileged.or(self.privileged);
        self.shm_size = other.shm_size.or(self.shm_size.take());
    }

    /// The `podman run` flags of this confinement, in a fixed order.
    pub fn run_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(user) = &self.user {
            args.extend(["--user".into(), user.clone()]);
        }
        for cap in &self.cap_drop {
            args.extend(["--cap-drop".into(), cap.clone()]);
        }
        for cap in &self.cap_add {
            args.extend(["--cap-add".into(), cap.clone()]);
        }
        if self.read_only == Some(true) {
            args.push("--read-only".into());
        }
        if self.no_new_privileges == Some(true) {
            args.extend(["--security-opt".into(), "no-new-privileges".into()]);
        }
        for opt in &self.security_opt {
            args.extend(["--security-opt".into(), opt.clone()]);
        }
        if self.privileged == Some(true) {
            args.push("--privileged".into());
        }
        if let Some(size) = &self.shm_size {
            args.extend(["--shm-size".into(), size.clone()]);
        }
        for path in &self.tmpfs {
            args.extend(["--tmpfs".into(), path.clone()]);
        }
        for device in &self.devices {
            args.extend(["--device".into(), device.clone()]);
        }
        args
    }
}

/// Everything a box's candies declare for running it, merged in the box's candy order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Runtime {
    /// supervisord programs; any makes supervisord the box's init.
    pub services: Vec<Service>,
    /// Volumes.
    pub volumes: Vec<VolumeDecl>,
    /// `KEY=VALUE` lines, one per key (a later candy's value wins).
    pub env: Vec<String>,
    /// Aliases.
    pub aliases: Vec<AliasDecl>,
    /// Routes.
    pub routes: Vec<Route>,
    /// Data seeding.
    pub data: Vec<DataSeed>,
    /// Hooks.
    pub hooks: Hooks,
    /// Confinement.
    pub security: Security,
}

/// The labels `box.generate` writes for the deploy-time fields (JSON values).
pub mod label {
    /// `supervisord` when the box has services.
    pub const INIT: &str = "ai.opencharly.init";
    /// `[Service]`.
    pub const SERVICE: &str = "ai.opencharly.service";
    /// `[VolumeDecl]`.
    pub const VOLUME: &str = "ai.opencharly.volume";
    /// `["KEY=VALUE"]`.
    pub const ENV: &str = "ai.opencharly.env";
    /// `[AliasDecl]` (`{name, command}` is what `charly alias install` reads).
    pub const ALIAS: &str = "ai.opencharly.alias";
    /// `[Route]`.
    pub const ROUTE: &str = "ai.opencharly.route";
    /// `[DataSeed]`.
    pub const DATA: &str = "ai.opencharly.data";
    /// `Hooks`.
    pub const HOOK: &str = "ai.opencharly.hook";
    /// `Security`.
    pub const SECURITY: &str = "ai.opencharly.security";
    /// `[port]`: the candies' ports.
    pub const PORT: &str = "ai.opencharly.port";
}

impl Runtime {
    /// Adds a later candy's declarations: lists appended, `env` merged by key and
    /// `security` merged (see [`Security`]), hooks appended.
    pub fn extend(&mut self, other: Runtime) {
        self.services.extend(other.services);
        self.volumes.extend(other.volumes);
        for line in other.env {
            let key = env_key(&line).to_owned();
            self.env.retain(|l| env_key(l) != key);
            self.env.push(line);
        }
        self.aliases.extend(other.aliases);
        self.routes.extend(other.routes);
        self.data.extend(other.data);
        self.hooks.pre_remove.extend(other.hooks.pre_remove);
        self.hooks.post_enable.extend(other.hooks.post_enable);
        self.security.merge(other.security);
    }

    /// What is wrong with the box's candies together: a service, volume or alias name
    /// declared twice, data for a volume the box does not declare.
    pub fn conflicts(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut twice = |what: &str, items: Vec<(&str, &str)>| {
            for (i, (name, candy)) in items.iter().enumerate() {
                if let Some((_, first)) = items[..i].iter().find(|(n, _)| n == name) {
                    out.push(format!(
                        "{what} `{name}` is declared by candy `{first}` and again by candy `{candy}`; rename one"
                    ));
                }
            }
        };
        twice("service", self.services.iter().map(|s| (s.name.as_str(), s.candy.as_str())).collect());
        twice("volume", self.volumes.iter().map(|s| (s.name.as_str(), s.candy.as_str())).collect());
        twice("alias", self.aliases.iter().map(|s| (s.name.as_str(), s.candy.as_str())).collect());
        for d in &self.data {
            if !self.volumes.iter().any(|v| v.name == d.volume) {
                let known: Vec<&str> = self.volumes.iter().map(|v| v.name.as_str()).collect();
                out.push(format!(
                    "candy `{}` seeds volume `{}`, which no candy of the box declares (volumes: {}); add a `volume:` node with it",
                    d.candy,
                    d.volume,
                    if known.is_empty() { "none".into() } else { known.join(", ") }
                ));
            }
        }
        out
    }

    /// Whether supervisord is the box's init (it has services).
    pub fn init(&self) -> Option<&'static str> {
        (!self.services.is_empty()).then_some("supervisord")
    }

    /// The `(label, JSON value)` pairs of what is declared; nothing for what is not.
    pub fn labels(&self) -> Vec<(&'static str, String)> {
        let json = |v: &dyn erased::Json| v.json();
        let mut out = Vec::new();
        if let Some(init) = self.init() {
            out.push((label::INIT, init.to_owned()));
        }
        let lists: [(&'static str, bool, &dyn erased::Json); 6] = [
            (label::SERVICE, self.services.is_empty(), &self.services),
            (label::VOLUME, self.volumes.is_empty(), &self.volumes),
            (label::ENV, self.env.is_empty(), &self.env),
            (label::ALIAS, self.aliases.is_empty(), &self.aliases),
            (label::ROUTE, self.routes.is_empty(), &self.routes),
            (label::DATA, self.data.is_empty(), &self.data),
        ];
        for (key, empty, value) in lists {
            if !empty {
                out.push((key, json(value)));
            }
        }
        if !self.hooks.is_empty() {
            out.push((label::HOOK, json(&self.hooks)));
        }
        if !self.security.is_empty() {
            out.push((label::SECURITY, json(&self.security)));
        }
        out
    }

    /// Reads the deploy-time fields back from an image's labels (absent or unreadable labels
    /// are empty).
    pub fn from_labels(labels: &BTreeMap<String, String>) -> Runtime {
        fn read<T: serde::de::DeserializeOwned + Default>(labels: &BTreeMap<String, String>, key: &str) -> T {
            labels.get(key).and_then(|v| serde_json::from_str(v).ok()).unwrap_or_default()
        }
        Runtime {
            services: read(labels, label::SERVICE),
            volumes: read(labels, label::VOLUME),
            env: read(labels, label::ENV),
            aliases: read(labels, label::ALIAS),
            routes: read(labels, label::ROUTE),
            data: read(labels, label::DATA),
            hooks: read(labels, label::HOOK),
            security: read(labels, label::SECURITY),
        }
    }

    /// `supervisord.conf` for the services: the daemon in the foreground logging to the
    /// container's stdout, its control socket in /run, a `[program:<name>]` per service, run
    /// as its own `user`, else as the box's `security.user`.
    pub fn supervisord_conf(&self, box_name: &str) -> String {
        // supervisord with `nodaemon` writes its own log to stdout already: its log file is
        // /dev/null, or the container's log (`charly logs`) would hold each of its lines twice.
        // The programs' output goes to stdout once (`stdout_logfile=/dev/stdout`).
        let mut out = format!(
            "; Generated by `charly box generate {box_name}`; declare services in the candies instead.\n\
             [supervisord]\nnodaemon=true\nuser=root\nlogfile=/dev/null\nlogfile_maxbytes=0\n\
             pidfile=/run/charly-supervisord.pid\n\n\
             [unix_http_server]\nfile=/run/charly-supervisor.sock\nchmod=0700\n\n\
             [rpcinterface:supervisor]\n\
             supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface\n\n\
             [supervisorctl]\nserverurl=unix:///run/charly-supervisor.sock\n"
        );
        // supervisord expands `%(name)s` in values: a literal `%` is `%%`.
        let esc = |s: &str| s.replace('%', "%%");
        for s in &self.services {
            out.push_str(&format!(
                "\n; from candy {}\n[program:{}]\ncommand={}\n",
                s.candy,
                s.name,
                esc(&s.command)
            ));
            // The box's `security.user` runs every program that names no user of its own
            // (supervisord itself stays root to switch users; `start` drops `--user`).
            // supervisord takes a name or a uid with a passwd entry: a `UID:GID` is its UID.
            let box_user = self.security.user.as_deref().map(|u| u.split(':').next().unwrap_or(u));
            if let Some(user) = s.user.as_deref().or(box_user) {
                out.push_str(&format!("user={user}\n"));
            }
            out.push_str(&format!(
                "autostart={}\nautorestart=true\nstopasgroup=true\nkillasgroup=true\n\
                 stdout_logfile=/dev/stdout\nstdout_logfile_maxbytes=0\nredirect_stderr=true\n",
                s.autostart
            ));
            if !s.env.is_empty() {
                let pairs: Vec<String> = s
                    .env
                    .iter()
                    .filter_map(|l| l.split_once('='))
                    .map(|(k, v)| format!("{k}=\"{}\"", esc(v).replace('\\', "\\\\").replace('"', "\\\"")))
                    .collect();
                out.push_str(&format!("environment={}\n", pairs.join(",")));
            }
        }
        out
    }
}

mod erased {
    /// A value serialised to a label's JSON: any `'` as `\u0027`, so the label can be
    /// single-quoted in the Containerfile.
    pub(crate) trait Json {
        fn json(&self) -> String;
    }

    impl<T: serde::Serialize> Json for T {
        fn json(&self) -> String {
            serde_json::to_string(self).expect("JSON values serialise").replace('\'', "\\u0027")
        }
    }
}

pub(crate) use erased::Json;

/// The deploy-time keys a box node may carry itself (charly.yml `box: {env, security}`).
pub const BOX_KEYS: [&str; 2] = ["env", "security"];

/// The deploy-time node kinds' keys, in documentation order.
pub const KEYS: [&str; 8] = ["service", "volume", "env", "alias", "route", "data", "hook", "security"];

mod parse;

pub use parse::{env_key, parse};

#[cfg(test)]
mod tests;
