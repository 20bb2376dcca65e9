//! The settings table: every key of `config.yml`, its environment variable, default, YAML
//! location and the values it accepts (REFERENCE.md §6, in charly's names).

use std::fmt;

/// What values a key accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One of a fixed list.
    OneOf(&'static [&'static str]),
    /// `true` or `false` (also accepted: `yes`/`no`, `1`/`0`, `on`/`off`; stored as a YAML bool).
    Bool,
    /// A non-negative integer (stored as a YAML integer).
    Integer,
    /// A positive integer, 1 or more (stored as a YAML integer): a count that cannot be none.
    Positive,
    /// A file system path; `~` and `$HOME` at its start are expanded when it is used.
    Path,
    /// A size: a number with an optional unit (`10G`, `512M`, `10 GiB`), or empty.
    Size,
    /// Any text.
    Text,
}

impl fmt::Display for Kind {
    /// The allowed values, for error messages: `auto, docker, podman`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kind::OneOf(values) => f.write_str(&values.join(", ")),
            Kind::Bool => f.write_str("true, false (also yes/no, on/off, 1/0)"),
            Kind::Integer => f.write_str("a whole number (0 or more)"),
            Kind::Positive => f.write_str("a whole number (1 or more)"),
            Kind::Path => f.write_str("a path"),
            Kind::Size => {
                f.write_str("a size such as 10G, 512M or 10 GiB (a bare number is MiB, as qemu's -m)")
            }
            Kind::Text => f.write_str("any text"),
        }
    }
}

/// One settings key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    /// The key as `settings get` spells it: `engine.build`, `secrets.kdbx_path`.
    pub name: &'static str,
    /// Its environment variable, which wins over the file.
    pub env: &'static str,
    /// Its default, as text.
    pub default: &'static str,
    /// Where it lives in config.yml: a YAML path (`["engine", "build"]`).
    pub yaml: &'static [&'static str],
    /// What it accepts.
    pub kind: Kind,
}

const ENGINES: &[&str] = &["auto", "docker", "podman"];

/// Every key, in `settings list` order.
pub const KEYS: &[Key] = &[
    key("engine.build", "CHARLY_BUILD_ENGINE", "auto", &["engine", "build"], Kind::OneOf(ENGINES)),
    key("engine.run", "CHARLY_RUN_ENGINE", "auto", &["engine", "run"], Kind::OneOf(ENGINES)),
    key(
        "engine.rootful",
        "CHARLY_ENGINE_ROOTFUL",
        "auto",
        &["engine", "rootful"],
        Kind::OneOf(&["auto", "machine", "sudo", "native"]),
    ),
    key("run_mode", "CHARLY_RUN_MODE", "auto", &["run_mode"], Kind::OneOf(&["auto", "direct", "quadlet"])),
    key("auto_enable", "CHARLY_AUTO_ENABLE", "true", &["auto_enable"], Kind::Bool),
    key(
        "bind_address",
        "CHARLY_BIND_ADDRESS",
        "127.0.0.1",
        &["bind_address"],
        Kind::OneOf(&["127.0.0.1", "0.0.0.0"]),
    ),
    key(
        "encrypted_storage_path",
        "CHARLY_ENCRYPTED_STORAGE_PATH",
        "~/.local/share/charly/encrypted",
        &["encrypted_storage_path"],
        Kind::Path,
    ),
    key(
        "volumes_path",
        "CHARLY_VOLUMES_PATH",
        "~/.local/share/charly/volumes",
        &["volumes_path"],
        Kind::Path,
    ),
    key(
        "secret_backend",
        "CHARLY_SECRET_BACKEND",
        "auto",
        &["secret_backend"],
        Kind::OneOf(&["auto", "keyring", "kdbx", "config"]),
    ),
    key(
        "keyring_collection_label",
        "CHARLY_KEYRING_COLLECTION_LABEL",
        "",
        &["keyring_collection_label"],
        Kind::Text,
    ),
    key("secrets.kdbx_path", "CHARLY_KDBX_PATH", "", &["secrets_kdbx_path"], Kind::Path),
    key("secrets.kdbx_key_file", "CHARLY_KDBX_KEY_FILE", "", &["secrets_kdbx_key_file"], Kind::Path),
    key("secrets.kdbx_cache", "CHARLY_KDBX_CACHE", "true", &["kdbx_cache"], Kind::Bool),
    key(
        "secrets.kdbx_cache_timeout",
        "CHARLY_KDBX_CACHE_TIMEOUT",
        "3600",
        &["kdbx_cache_timeout"],
        Kind::Integer,
    ),
    key("forward_gpg_agent", "CHARLY_FORWARD_GPG_AGENT", "true", &["forward_gpg_agent"], Kind::Bool),
    key("forward_ssh_agent", "CHARLY_FORWARD_SSH_AGENT", "true", &["forward_ssh_agent"], Kind::Bool),
    key(
        "vm.backend",
        "CHARLY_VM_BACKEND",
        "auto",
        &["vm", "backend"],
        Kind::OneOf(&["auto", "libvirt", "qemu"]),
    ),
    key("vm.disk_size", "CHARLY_VM_DISK_SIZE", "10 GiB", &["vm", "disk_size"], Kind::Size),
    key("vm.ram", "CHARLY_VM_RAM", "4G", &["vm", "ram"], Kind::Size),
    key("vm.cpus", "CHARLY_VM_CPUS", "2", &["vm", "cpus"], Kind::Positive),
    // ext4 only: `vm build` fills the file system with `mkfs.ext4 -d` (no loop device). The
    // reference's vm.root_size and vm.transport are left out: nothing of charly's reads them
    // (a VM's root is its whole disk, and the disk comes from the built image in podman).
    key("vm.rootfs", "CHARLY_VM_ROOTFS", "ext4", &["vm", "rootfs"], Kind::OneOf(&["ext4"])),
];

impl Key {
    /// Whether a project's `.env` may set it. Not where this host keeps its credentials
    /// (`secret_backend`, `keyring_collection_label`, `secrets.*`), not which of its network
    /// interfaces it publishes ports on (`bind_address`: `0.0.0.0` opens them to the network,
    /// trial 31, MED-3), nor any path on the host: a `.env` is repository content, and a
    /// repository's `CHARLY_SECRET_BACKEND=config` sent a password to the plaintext file
    /// (trial 29, M3). Nor does a tool set them (`settings.set`).
    pub fn from_dotenv(&self) -> bool {
        !(self.kind == Kind::Path
            || self.name == "bind_address"
            || self.name == "secret_backend"
            || self.name == "keyring_collection_label"
            || self.name.starts_with("secrets."))
    }
}

const fn key(
    name: &'static str,
    env: &'static str,
    default: &'static str,
    yaml: &'static [&'static str],
    kind: Kind,
) -> Key {
    Key { name, env, default, yaml, kind }
}

/// The prefix of the per-box VNC password keys (`vnc.password.<box[-instance]>`), which live in
/// the credential store (service `charly/vnc`), never in the file.
pub const VNC_PASSWORD_PREFIX: &str = "vnc.password.";

/// A key as the user named it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Named<'a> {
    /// A key of [`KEYS`].
    Plain(&'static Key),
    /// `vnc.password.<name>`: the credential of `<name>` in service `charly/vnc`.
    VncPassword(&'a str),
}

/// Looks `name` up.
///
/// # Errors
///
/// The message for an unknown key, listing the known ones.
pub fn lookup(name: &str) -> Result<Named<'_>, String> {
    if let Some(rest) = name.strip_prefix(VNC_PASSWORD_PREFIX) {
        return if rest.is_empty() || rest.contains('/') || rest.chars().any(char::is_whitespace) {
            Err(format!(
                "`{name}`: a VNC password key is vnc.password.<box> or vnc.password.<box>-<instance> \
                 (no spaces or `/`)"
            ))
        } else {
            Ok(Named::VncPassword(rest))
        };
    }
    KEYS.iter().find(|k| k.name == name).map(Named::Plain).ok_or_else(|| {
        let known: Vec<&str> = KEYS.iter().map(|k| k.name).collect();
        format!("unknown settings key `{name}`; the keys are {}, and vnc.password.<box>", known.join(", "))
    })
}

/// A value checked against its key, in the form it is stored in config.yml.
#[derive(Clone, Debug, PartialEq)]
pub enum Checked {
    /// Stored as a YAML string.
    Text(String),
    /// Stored as a YAML bool.
    Bool(bool),
    /// Stored as a YAML integer.
    Integer(u64),
}

impl Checked {
    /// As YAML.
    pub fn to_yaml(&self) -> yaml_serde::Value {
        match self {
            Checked::Text(s) => yaml_serde::Value::String(s.clone()),
            Checked::Bool(b) => yaml_serde::Value::Bool(*b),
            Checked::Integer(n) => yaml_serde::Value::Number((*n).into()),
        }
    }
}

impl fmt::Display for Checked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Checked::Text(s) => f.write_str(s),
            Checked::Bool(b) => write!(f, "{b}"),
            Checked::Integer(n) => write!(f, "{n}"),
        }
    }
}

impl Key {
    /// Checks `value` for this key.
    ///
    /// # Errors
    ///
    /// A message naming the key, the value and the allowed values.
    pub fn check(&self, value: &str) -> Result<Checked, String> {
        let bad = || format!("invalid value {value:?} for {}: allowed values are {}", self.name, self.kind);
        match self.kind {
            Kind::OneOf(values) => {
                values.contains(&value).then(|| Checked::Text(value.to_owned())).ok_or_else(bad)
            }
            Kind::Bool => match value.to_ascii_lowercase().as_str() {
                "true" | "yes" | "on" | "1" => Ok(Checked::Bool(true)),
                "false" | "no" | "off" | "0" => Ok(Checked::Bool(false)),
                _ => Err(bad()),
            },
            Kind::Integer => value.trim().parse::<u64>().map(Checked::Integer).map_err(|_| bad()),
            Kind::Positive => {
                value.trim().parse::<u64>().ok().filter(|n| *n >= 1).map(Checked::Integer).ok_or_else(bad)
            }
            Kind::Size => is_size(value).then(|| Checked::Text(value.trim().to_owned())).ok_or_else(bad),
            Kind::Path | Kind::Text => {
                if value.contains('\n') || value.contains('\0') {
                    Err(format!("invalid value for {}: it holds a newline or NUL", self.name))
                } else {
                    Ok(Checked::Text(value.to_owned()))
                }
            }
        }
    }
}

/// `""`, `10`, `10G`, `512M`, `10 GiB`, `1.5T`, `4096K`, `2gb`.
fn is_size(value: &str) -> bool {
    let value = value.trim();
    if value.is_empty() {
        return true;
    }
    let digits = value.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(value.len());
    let (number, unit) = value.split_at(digits);
    let unit = unit.trim().to_ascii_lowercase();
    number.parse::<f64>().is_ok_and(|n| n > 0.0)
        && ["", "b", "k", "kb", "kib", "m", "mb", "mib", "g", "gb", "gib", "t", "tb", "tib"]
            .contains(&unit.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_passes_its_own_check() {
        for key in KEYS {
            key.check(key.default).unwrap_or_else(|e| panic!("{e}"));
            assert!(key.env.starts_with("CHARLY_"), "{}", key.name);
        }
    }

    #[test]
    fn bad_values_name_the_key_and_the_allowed_values() {
        let engine = KEYS[0];
        assert_eq!(
            engine.check("rkt").unwrap_err(),
            "invalid value \"rkt\" for engine.build: allowed values are auto, docker, podman"
        );
        assert_eq!(lookup("secrets.kdbx_cache").map(|_| ()), Ok(()));
        assert!(lookup("nope").unwrap_err().contains("unknown settings key `nope`"));
        assert_eq!(lookup("vnc.password.web-2"), Ok(Named::VncPassword("web-2")));
        assert!(lookup("vnc.password.").is_err());
        assert!(is_size("10 GiB") && is_size("4G") && !is_size("big") && !is_size("0"));
    }
}
