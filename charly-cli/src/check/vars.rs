//! `${NAME}` and `${NAME:arg}` variables in check fields, resolved from `podman inspect` of
//! the running container (`REFERENCE.md` §13):
//!
//! | variable | value |
//! |---|---|
//! | `${HOST_PORT:N}` | the host port published for container port `N` (`N/udp` for UDP) |
//! | `${CONTAINER_NAME}` | `charly-<box>[-<instance>]` |
//! | `${CONTAINER_IP}` | the container's address (top level, else its first network) |
//! | `${ENV_<NAME>}` | the container's environment variable `NAME` |
//! | `${BOX}`, `${INSTANCE}` | the box, and the instance when there is one |
//!
//! A check with a variable that does not resolve (no running container under `check box`, an
//! unpublished port) is skipped, and the skip names the variables. A name that is none of
//! these (`${HOST_PROT:8080}`, a shell's `${HOME}`) is a problem of the plan ([`unknown`]),
//! never a skip.

use std::collections::BTreeMap;

use serde_json::Value;

/// Variable values by name (`HOST_PORT:8080`, `CONTAINER_NAME` ...).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Vars {
    values: BTreeMap<String, String>,
}

impl Vars {
    /// Sets `name` (`HOST_PORT:8080` form for those with an argument).
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.values.insert(name.into(), value.into());
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// The variables of a running container from its `podman inspect` JSON (an array of one
    /// object or the object), for `box_name`/`instance`.
    pub fn from_inspect(inspect: &Value, box_name: &str, instance: Option<&str>) -> Vars {
        let c = match inspect {
            Value::Array(items) => items.first().cloned().unwrap_or(Value::Null),
            other => other.clone(),
        };
        let mut vars = Vars::default();
        vars.set("BOX", box_name);
        if let Some(i) = instance {
            vars.set("INSTANCE", i);
        }
        if let Some(name) = c.get("Name").and_then(Value::as_str) {
            vars.set("CONTAINER_NAME", name.trim_start_matches('/'));
        }
        let ip = c
            .pointer("/NetworkSettings/IPAddress")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .or_else(|| {
                c.pointer("/NetworkSettings/Networks").and_then(Value::as_object).and_then(|n| {
                    n.values().find_map(|v| v.get("IPAddress")?.as_str().filter(|s| !s.is_empty()))
                })
            });
        if let Some(ip) = ip {
            vars.set("CONTAINER_IP", ip);
        }
        for pointer in ["/HostConfig/PortBindings", "/NetworkSettings/Ports"] {
            let Some(ports) = c.pointer(pointer).and_then(Value::as_object) else { continue };
            for (key, bindings) in ports {
                let host = bindings.as_array().and_then(|b| {
                    b.iter().find_map(|b| b.get("HostPort")?.as_str().filter(|p| !p.is_empty()))
                });
                let Some(host) = host else { continue };
                // `8080/tcp` is `HOST_PORT:8080`; other protocols keep theirs (`53/udp`).
                let port = key.strip_suffix("/tcp").unwrap_or(key);
                vars.set(format!("HOST_PORT:{port}"), host);
            }
        }
        let env = c.pointer("/Config/Env").and_then(Value::as_array).into_iter().flatten();
        for line in env.filter_map(Value::as_str) {
            if let Some((k, v)) = line.split_once('=') {
                vars.set(format!("ENV_{k}"), v);
            }
        }
        vars
    }
}

/// Whether `name` (what is between `${` and `}`) is one of the [module](self)'s variables.
pub(super) fn is_known(name: &str) -> bool {
    match name {
        "BOX" | "INSTANCE" | "CONTAINER_NAME" | "CONTAINER_IP" => true,
        _ => {
            if let Some(port) = name.strip_prefix("HOST_PORT:") {
                let number = port.strip_suffix("/udp").or_else(|| port.strip_suffix("/tcp")).unwrap_or(port);
                number.parse::<u16>().is_ok_and(|p| p > 0)
            } else {
                name.strip_prefix("ENV_").is_some_and(|env| !env.is_empty())
            }
        }
    }
}

/// A `${` in a string of a plan: a whole `${...}` (what is between the braces, trimmed), or
/// one with no closing `}` (the text from `${` on).
enum Reference<'a> {
    Closed(&'a str),
    Open(&'a str),
}

/// Every `${` in the strings of `value`, in order.
fn references(value: &Value) -> Vec<Reference<'_>> {
    fn walk<'a>(value: &'a Value, out: &mut Vec<Reference<'a>>) {
        match value {
            Value::String(text) => {
                let mut rest = text.as_str();
                while let Some(start) = rest.find("${") {
                    let Some(len) = rest[start..].find('}') else {
                        out.push(Reference::Open(&rest[start..]));
                        break;
                    };
                    out.push(Reference::Closed(rest[start + 2..start + len].trim()));
                    rest = &rest[start + len + 1..];
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => map.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, &mut out);
    out
}

/// Each item once, in order.
fn once(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// The `${...}` names in the strings of `value` that are not variables ([`is_known`]), each
/// once, in order.
pub(super) fn unknown(value: &Value) -> Vec<String> {
    once(references(value).into_iter().filter_map(|r| match r {
        Reference::Closed(name) if !is_known(name) => Some(name.to_owned()),
        _ => None,
    }))
}

/// The strings of `value` where a `${` has no closing `}` (`echo ${ENV_X`), each from that
/// `${` on, once, in order: substitution would leave them as they are, and a shell refuses
/// them.
pub(super) fn unterminated(value: &Value) -> Vec<String> {
    once(references(value).into_iter().filter_map(|r| match r {
        Reference::Open(text) => Some(text.to_owned()),
        Reference::Closed(_) => None,
    }))
}

/// `text` with every `${NAME}`/`${NAME:arg}` replaced; `Err` lists the ones that do not
/// resolve (in order, each once).
pub fn substitute(text: &str, vars: &Vars) -> Result<String, Vec<String>> {
    let mut out = String::with_capacity(text.len());
    let mut missing = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else { break };
        let name = rest[start + 2..start + len].trim();
        out.push_str(&rest[..start]);
        match vars.get(name) {
            Some(value) => out.push_str(value),
            None => {
                if !missing.iter().any(|m| m == name) {
                    missing.push(name.to_owned());
                }
            }
        }
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    if missing.is_empty() { Ok(out) } else { Err(missing) }
}

/// Every string in `value` substituted; the names that do not resolve, each once.
pub(super) fn substitute_json(value: &Value, vars: &Vars, missing: &mut Vec<String>) -> Value {
    match value {
        Value::String(s) => match substitute(s, vars) {
            Ok(s) => Value::String(s),
            Err(names) => {
                for n in names {
                    if !missing.contains(&n) {
                        missing.push(n);
                    }
                }
                value.clone()
            }
        },
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| substitute_json(v, vars, missing)).collect())
        }
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), substitute_json(v, vars, missing))).collect())
        }
        other => other.clone(),
    }
}

/// Drops the problems (those from index `from` on) that quote a value of `node` holding a
/// variable, as JSON or Rust quote it (`"${ENV_B}" is not a button`, `got "${X}"`): such a
/// value is checked when the plan runs, once substituted, by the same parse.
pub(super) fn defer_variables(
    node: &serde_json::Map<String, Value>,
    problems: &mut Vec<String>,
    from: usize,
) {
    let quoted: Vec<String> = node
        .values()
        .filter_map(Value::as_str)
        .filter(|s| s.contains("${"))
        .flat_map(|s| [format!("{s:?}"), Value::String(s.to_owned()).to_string()])
        .collect();
    if quoted.is_empty() {
        return;
    }
    let mut index = 0;
    problems.retain(|p| {
        index += 1;
        index <= from || !quoted.iter().any(|q| p.contains(q.as_str()))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_env_and_names_resolve_from_inspect() {
        let inspect = serde_json::json!([{
            "Name": "charly-web",
            "NetworkSettings": {"IPAddress": "", "Networks": {"podman": {"IPAddress": "10.88.0.5"}},
                "Ports": {"8080/tcp": [{"HostIp": "127.0.0.1", "HostPort": "41234"}], "53/udp": [{"HostPort": "5353"}],
                          "9000/tcp": null}},
            "Config": {"Env": ["PATH=/bin", "GREETING=hi=there"]}
        }]);
        let vars = Vars::from_inspect(&inspect, "web", None);
        let text = "${CONTAINER_NAME} ${CONTAINER_IP} ${HOST_PORT:8080} ${HOST_PORT:53/udp} ${ENV_GREETING}";
        assert_eq!(substitute(text, &vars).unwrap(), "charly-web 10.88.0.5 41234 5353 hi=there");
        assert_eq!(
            substitute("${HOST_PORT:9000} ${INSTANCE} ${HOST_PORT:9000}", &vars).unwrap_err(),
            vec!["HOST_PORT:9000".to_owned(), "INSTANCE".to_owned()]
        );
        let node = serde_json::json!({"matching": "${HOST_PROT:8080} ${HOST_PORT:53/udp} ${ENV_X}", "x": ["${HOME}", "${BOX}"]});
        assert_eq!(unknown(&node), ["HOST_PROT:8080", "HOME"]);
        let node =
            serde_json::json!({"command": "echo ${ENV_X", "stdout": ["${BOX} ${ENV_Y}", "a ${B} ${C"]});
        assert_eq!(unterminated(&node), ["${ENV_X", "${C"]);
    }

    /// A value holding a variable passes validation and, substituted to the text of a number
    /// or a flag, is read as one when the plan runs (it was refused then: `got "5"`).
    #[test]
    fn variables_are_checked_once_substituted() {
        let step = |v: Value| {
            let mut problems = Vec::new();
            let parsed = crate::check::wl_step::parse_wl(v.as_object().unwrap(), &mut problems);
            (parsed.is_some(), problems)
        };
        let raw = serde_json::json!({"wl": "click", "x": "${ENV_X}", "y": 1, "button": "${ENV_B}"});
        assert_eq!(step(raw), (true, vec![]));
        let ran = serde_json::json!({"wl": "click", "x": "5", "y": 1, "button": "right"});
        assert_eq!(step(ran), (true, vec![]));
        let wrong = serde_json::json!({"wl": "click", "x": "five", "y": 1, "button": "${ENV_B}"});
        assert_eq!(step(wrong).1, ["x: expects an integer, got \"five\""]);
    }
}
