//! Reading the deploy-time nodes of a candy's file: one parser per kind, each problem worded
//! with its key path (`service[1].user`) and what is allowed.

use serde_json::{Map, Value};

use super::{AliasDecl, DATA_DIR, DataSeed, Route, Runtime, Security, Service, VolumeDecl};
use crate::project::names::{check_alias_command, check_alias_name, check_env};

/// Reads one deploy-time node's value (`kind` is one of [`KEYS`](super::KEYS)) into `into`, for candy
/// `candy`; every problem is pushed onto `problems`, worded with the key path.
pub fn parse(kind: &str, spec: &Value, candy: &str, into: &mut Runtime, problems: &mut Vec<String>) {
    let mut p = Problems { list: problems };
    match kind {
        "service" => {
            for (at, item) in p.list_of(spec, kind, "{name, command, user, autostart, env}") {
                let keys = ["name", "command", "user", "autostart", "env"];
                if !p.keys(&at, item, &keys) {
                    continue;
                }
                let name = p.name(&at, item, "name", "letters, digits, `_`, `.` and `-`", program_name);
                let command = p.line(&at, item, "command");
                let user = p.opt_str(&at, item, "user", user_spec);
                let autostart = p.opt_bool(&at, item, "autostart").unwrap_or(true);
                let env = p.env(&format!("{at}.env"), item.get("env"));
                if let (Some(name), Some(command)) = (name, command) {
                    into.services.push(Service { name, command, user, autostart, env, candy: candy.into() });
                }
            }
        }
        "volume" => {
            for (at, item) in p.list_of(spec, kind, "{name, path}") {
                if !p.keys(&at, item, &["name", "path"]) {
                    continue;
                }
                let name = p.name(
                    &at,
                    item,
                    "name",
                    "a letter or digit, then letters, digits, `_`, `.`, `-`",
                    volume_name,
                );
                let path = p.opt_str(&at, item, "path", absolute);
                if path.is_none() && item.get("path").is_none() {
                    p.push(format!("`{at}.path` is missing; give the absolute path in the container"));
                }
                if let (Some(name), Some(path)) = (name, path) {
                    into.volumes.push(VolumeDecl { name, path, candy: candy.into() });
                }
            }
        }
        "env" => {
            let env = p.env(kind, Some(spec));
            into.extend(Runtime { env, ..Runtime::default() });
        }
        "alias" => {
            for (at, item) in p.list_of(spec, kind, "{name, command}") {
                if !p.keys(&at, item, &["name", "command"]) {
                    continue;
                }
                let name = p.checked(&at, item, "name", check_alias_name);
                let command = p.checked(&at, item, "command", check_alias_command);
                if let (Some(name), Some(command)) = (name, command) {
                    into.aliases.push(AliasDecl { name, command, candy: candy.into() });
                }
            }
        }
        "route" => {
            for (at, item) in p.list_of(spec, kind, "{host, port, path}") {
                if !p.keys(&at, item, &["host", "port", "path"]) {
                    continue;
                }
                let host = p.name(&at, item, "host", "a host name: letters, digits, `-` and `.`", host_name);
                let port = p.port(&at, item);
                let path = if item.get("path").is_some() {
                    p.opt_str(&at, item, "path", |s| {
                        if s.starts_with('/') && !s.contains(char::is_whitespace) {
                            Ok(())
                        } else {
                            Err("a URL path starting with `/`, no spaces".into())
                        }
                    })
                } else {
                    Some("/".into())
                };
                if let (Some(host), Some(port), Some(path)) = (host, port, path) {
                    into.routes.push(Route { host, path, port, candy: candy.into() });
                }
            }
        }
        "data" => {
            for (at, item) in p.list_of(spec, kind, "{volume, source, dest}") {
                if !p.keys(&at, item, &["volume", "source", "dest"]) {
                    continue;
                }
                let volume = p.name(&at, item, "volume", "the name of a `volume:` entry", volume_name);
                let source = p.opt_str(&at, item, "source", relative);
                if item.get("source").is_none() {
                    p.push(format!("`{at}.source` is missing; give a file or directory of the candy"));
                }
                let dest = if item.get("dest").is_some() {
                    p.opt_str(&at, item, "dest", relative)
                } else {
                    Some(String::new())
                };
                if let (Some(volume), Some(source), Some(dest)) = (volume, source, dest) {
                    let staging = format!(
                        "{DATA_DIR}/{candy}/{}",
                        into.data.iter().filter(|d| d.candy == candy).count()
                    );
                    into.data.push(DataSeed { volume, source, dest, staging, candy: candy.into() });
                }
            }
        }
        "hook" => {
            let Some(map) = spec.as_object() else {
                p.push(format!("`hook:` must be a map of pre_remove, post_enable to a command, not {spec}"));
                return;
            };
            if !p.keys("hook", spec, &["pre_remove", "post_enable"]) {
                return;
            }
            for (key, list) in
                [("pre_remove", &mut into.hooks.pre_remove), ("post_enable", &mut into.hooks.post_enable)]
            {
                // One command, or a list of them run in order (the image's label holds a list).
                match map.get(key) {
                    Some(Value::Array(items)) => {
                        for (i, item) in items.iter().enumerate() {
                            let one = serde_json::json!({ "command": item });
                            if let Some(command) = p.line(&format!("hook.{key}[{i}]"), &one, "command") {
                                list.push(command);
                            }
                        }
                    }
                    Some(_) => {
                        if let Some(command) = p.line("hook", spec, key) {
                            list.push(command);
                        }
                    }
                    None => {}
                }
            }
        }
        "security" => {
            if let Some(security) = parse_security(spec, &mut p) {
                into.security.merge(security);
            }
        }
        _ => {}
    }
}

fn parse_security(spec: &Value, p: &mut Problems<'_>) -> Option<Security> {
    const KEYS: [&str; 10] = [
        "user",
        "cap_add",
        "cap_drop",
        "read_only",
        "no_new_privileges",
        "privileged",
        "shm_size",
        "tmpfs",
        "devices",
        "security_opt",
    ];
    if !spec.is_object() {
        p.push(format!("`security:` must be a map ({}), not {spec}", KEYS.join(", ")));
        return None;
    }
    if !p.keys("security", spec, &KEYS) {
        return None;
    }
    let at = "security";
    Some(Security {
        user: p.opt_str(at, spec, "user", user_spec),
        cap_add: p.strings(at, spec, "cap_add", capability),
        cap_drop: p.strings(at, spec, "cap_drop", capability),
        read_only: p.opt_bool(at, spec, "read_only"),
        no_new_privileges: p.opt_bool(at, spec, "no_new_privileges"),
        privileged: p.opt_bool(at, spec, "privileged"),
        shm_size: p.opt_str(at, spec, "shm_size", size),
        tmpfs: p.strings(at, spec, "tmpfs", absolute),
        devices: p.strings(at, spec, "devices", device),
        security_opt: p.strings(at, spec, "security_opt", |s| {
            if !s.is_empty() && !s.contains(char::is_whitespace) {
                Ok(())
            } else {
                Err("a podman --security-opt value such as label=disable".into())
            }
        }),
    })
}

/// The problems of one node, and the readers that push them.
struct Problems<'a> {
    list: &'a mut Vec<String>,
}

type Rule = fn(&str) -> Result<(), String>;

impl Problems<'_> {
    fn push(&mut self, message: String) {
        self.list.push(message);
    }

    /// The items of a list node, each with its key path (`service[1]`).
    fn list_of<'v>(&mut self, spec: &'v Value, kind: &str, shape: &str) -> Vec<(String, &'v Value)> {
        match spec {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| {
                    let at = format!("{kind}[{i}]");
                    if item.is_object() {
                        Some((at, item))
                    } else {
                        self.push(format!("`{at}` is {item}; each entry is a map {shape}"));
                        None
                    }
                })
                .collect(),
            other => {
                self.push(format!("`{kind}:` must be a list of {shape}, not {other}"));
                Vec::new()
            }
        }
    }

    /// Whether `item` has only `allowed` keys (each other one is a problem).
    fn keys(&mut self, at: &str, item: &Value, allowed: &[&str]) -> bool {
        let mut ok = true;
        for key in item.as_object().into_iter().flat_map(|m| m.keys()) {
            if !allowed.contains(&key.as_str()) {
                self.push(format!("unknown key `{at}.{key}`; allowed: {}", allowed.join(", ")));
                ok = false;
            }
        }
        ok
    }

    /// A required string checked by `rule`.
    fn name(
        &mut self,
        at: &str,
        item: &Value,
        key: &str,
        allowed: &str,
        rule: fn(&str) -> bool,
    ) -> Option<String> {
        match item.get(key) {
            Some(Value::String(s)) if rule(s) => Some(s.clone()),
            Some(Value::String(s)) => {
                self.push(format!("`{at}.{key}` is {s:?}; allowed: {allowed}"));
                None
            }
            None | Some(Value::Null) => {
                self.push(format!("`{at}.{key}` is missing; allowed: {allowed}"));
                None
            }
            Some(other) => {
                self.push(format!("`{at}.{key}` is {other}, not a string; allowed: {allowed}"));
                None
            }
        }
    }

    /// A required one-line, non-empty string.
    fn line(&mut self, at: &str, item: &Value, key: &str) -> Option<String> {
        self.checked(at, item, key, |s| {
            if s.trim().is_empty() || s.contains(['\n', '\r', '\0']) {
                Err(format!("{s:?} is not a command: give one non-empty line"))
            } else {
                Ok(())
            }
        })
    }

    /// A required string checked by `rule` (which words its own message).
    fn checked(&mut self, at: &str, item: &Value, key: &str, rule: Rule) -> Option<String> {
        match item.get(key) {
            Some(Value::String(s)) => match rule(s) {
                Ok(()) => Some(s.clone()),
                Err(why) => {
                    self.push(format!("`{at}.{key}`: {why}"));
                    None
                }
            },
            None | Some(Value::Null) => {
                self.push(format!("`{at}.{key}` is missing"));
                None
            }
            Some(other) => {
                self.push(format!("`{at}.{key}` is {other}, not a string"));
                None
            }
        }
    }

    /// An optional string checked by `rule`.
    fn opt_str(&mut self, at: &str, item: &Value, key: &str, rule: Rule) -> Option<String> {
        match item.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => match rule(s) {
                Ok(()) => Some(s.clone()),
                Err(allowed) => {
                    self.push(format!("`{at}.{key}` is {s:?}; allowed: {allowed}"));
                    None
                }
            },
            // A YAML number where a string is meant (`user: 1000`, `shm_size: 64`).
            Some(Value::Number(n)) => self.opt_str(
                at,
                &Value::Object(Map::from_iter([(key.to_owned(), Value::String(n.to_string()))])),
                key,
                rule,
            ),
            Some(other) => {
                self.push(format!("`{at}.{key}` is {other}, not a string"));
                None
            }
        }
    }

    fn opt_bool(&mut self, at: &str, item: &Value, key: &str) -> Option<bool> {
        match item.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                self.push(format!("`{at}.{key}` is {other}; allowed: true, false"));
                None
            }
        }
    }

    fn port(&mut self, at: &str, item: &Value) -> Option<u16> {
        match item.get("port") {
            Some(Value::Number(n)) if n.as_u64().is_some_and(|p| (1..=65535).contains(&p)) => {
                n.as_u64().and_then(|p| u16::try_from(p).ok())
            }
            None | Some(Value::Null) => {
                self.push(format!("`{at}.port` is missing; allowed: a container port, 1 to 65535"));
                None
            }
            Some(other) => {
                self.push(format!("`{at}.port` is {other}; allowed: a container port, 1 to 65535"));
                None
            }
        }
    }

    /// An optional list of strings, each checked by `rule`.
    fn strings(&mut self, at: &str, item: &Value, key: &str, rule: Rule) -> Vec<String> {
        match item.get(key) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .filter_map(|(i, v)| match v.as_str().map(|s| (s, rule(s))) {
                    Some((s, Ok(()))) => Some(s.to_owned()),
                    Some((s, Err(allowed))) => {
                        self.push(format!("`{at}.{key}[{i}]` is {s:?}; allowed: {allowed}"));
                        None
                    }
                    None => {
                        self.push(format!("`{at}.{key}[{i}]` is {v}, not a string"));
                        None
                    }
                })
                .collect(),
            Some(other) => {
                self.push(format!("`{at}.{key}` must be a list of strings, not {other}"));
                Vec::new()
            }
        }
    }

    /// A list of `KEY=VALUE` lines at `at`.
    fn env(&mut self, at: &str, list: Option<&Value>) -> Vec<String> {
        match list {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .filter_map(|(i, v)| match v.as_str().map(|s| (s, check_env(s))) {
                    Some((s, Ok(()))) => Some(s.to_owned()),
                    Some((_, Err(why))) => {
                        self.push(format!("`{at}[{i}]`: {why}"));
                        None
                    }
                    None => {
                        self.push(format!("`{at}[{i}]` is {v}, not a KEY=VALUE string"));
                        None
                    }
                })
                .collect(),
            Some(other) => {
                self.push(format!("`{at}` must be a list of KEY=VALUE lines, not {other}"));
                Vec::new()
            }
        }
    }
}

/// The key of a `KEY=VALUE` line (the whole line when it has no `=`).
pub fn env_key(line: &str) -> &str {
    line.split_once('=').map_or(line, |(k, _)| k)
}

fn program_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

fn volume_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.len() <= 64
        && s.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

fn host_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|l| {
            !l.is_empty()
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

fn user_spec(s: &str) -> Result<(), String> {
    let part = |p: &str| {
        !p.is_empty()
            && !p.starts_with('-')
            && p.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
    };
    let ok = match s.split_once(':') {
        Some((u, g)) => part(u) && part(g),
        None => part(s),
    };
    if ok { Ok(()) } else { Err("a user name, UID, or USER:GROUP / UID:GID".into()) }
}

fn absolute(s: &str) -> Result<(), String> {
    if s.starts_with('/') && !s.contains(['\n', '\0', ':', ',']) && !s.split('/').any(|c| c == "..") {
        Ok(())
    } else {
        Err("an absolute path (starting with `/`, no `..`, `:` or `,`)".into())
    }
}

fn relative(s: &str) -> Result<(), String> {
    let ok = !s.starts_with('/')
        && !s.contains(['\n', '\0', '\\'])
        && !s.split('/').any(|c| c == "..")
        && !s.chars().any(char::is_whitespace);
    if ok {
        Ok(())
    } else {
        Err("a relative path inside the candy's directory (no leading `/`, no `..`, no spaces)".into())
    }
}

fn capability(s: &str) -> Result<(), String> {
    if !s.is_empty() && !s.starts_with("CAP_") && s.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
        Ok(())
    } else {
        Err("a capability name in upper case without CAP_ (NET_ADMIN, SYS_PTRACE, ALL)".into())
    }
}

fn size(s: &str) -> Result<(), String> {
    let digits = s.trim_end_matches(['b', 'k', 'm', 'g']);
    if !digits.is_empty() && digits.len() + 1 >= s.len() && digits.chars().all(|c| c.is_ascii_digit()) {
        Ok(())
    } else {
        Err("a size: a number with an optional unit b, k, m or g (64m)".into())
    }
}

fn device(s: &str) -> Result<(), String> {
    let mut parts = s.split(':');
    let host = parts.next().unwrap_or_default();
    let ok = host.starts_with("/dev/") && parts.clone().count() <= 2 && !s.contains(char::is_whitespace);
    if ok { Ok(()) } else { Err("a host device /dev/NAME[:CONTAINER_PATH[:rwm]]".into()) }
}
