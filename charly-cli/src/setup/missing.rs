//! The error of `config setup` when declared secrets have no value: which secrets, which
//! store (with its file), and the command that stores each in that store, as it can be run.

use super::{SECRET_SERVICE, SetupError};
use crate::credentials::{Active, Store, config_key};

/// [`SetupError::MissingSecrets`] of deployment `key` for credential keys `keys` (under
/// [`SECRET_SERVICE`]), each with the secret's name: `(name, credential key)`.
pub(super) fn missing_secrets(store: &Store, key: String, keys: &[(String, String)]) -> SetupError {
    let missing = keys.iter().map(|(name, k)| format!("{name} ({SECRET_SERVICE}/{k})")).collect();
    let set = |k: &str| format!("`charly secrets set {SECRET_SERVICE} {k} <VALUE>`");
    let config_file = || {
        let path = store.settings().file().path().to_owned();
        if path.as_os_str().is_empty() { crate::config::config_path() } else { path }
    };
    let (backend, how) = match store.active() {
        Active::Kdbx(path) if path.is_file() => (
            format!("kdbx {}", path.display()),
            keys.iter().map(|(_, k)| set(k)).collect::<Vec<_>>().join(", "),
        ),
        Active::Kdbx(path) => (
            format!(
                "kdbx {}, which does not exist",
                if path.as_os_str().is_empty() { "(no secrets.kdbx_path)".into() } else { path.display().to_string() }
            ),
            init_then_set(keys, &set),
        ),
        // No command writes the config backend's values when it was chosen by name; its
        // file takes the line.
        Active::Config if store.settings().secret_backend() == "config" => (
            format!("config {}", config_file().display()),
            keys.iter()
                .map(|(_, k)| format!("the entry `{}: <VALUE>` under `vnc_passwords:`", config_key(SECRET_SERVICE, k)))
                .collect::<Vec<_>>()
                .join(", ")
                + &format!(" in {} (secret_backend: config)", config_file().display()),
        ),
        // `auto` found neither a keyring nor a KeePass database: the database that
        // `secrets init` creates (and names in config.yml) is the one `auto` picks then.
        Active::Config => (
            format!("config {} (secret_backend auto: no keyring, no KeePass database)", config_file().display()),
            init_then_set(keys, &set),
        ),
        Active::Invalid(why) => (
            why.clone(),
            format!(
                "{}, once secret_backend names a store",
                keys.iter().map(|(_, k)| set(k)).collect::<Vec<_>>().join(", ")
            ),
        ),
        Active::Keyring(_) => (
            store.active().name(),
            keys.iter()
                .map(|(_, k)| {
                    format!(
                        "`secret-tool store --label={SECRET_SERVICE}/{k} service {SECRET_SERVICE} username {k}` \
                         (it reads the value from stdin)"
                    )
                })
                .collect::<Vec<_>>()
                .join(", "),
        ),
    };
    SetupError::MissingSecrets { key, missing, backend, how }
}

/// `charly secrets init`, then a `secrets set` per key.
fn init_then_set(keys: &[(String, String)], set: &dyn Fn(&str) -> String) -> String {
    let sets: Vec<String> = keys.iter().map(|(_, k)| set(k)).collect();
    format!(
        "`charly secrets init` (the database's password from $CHARLY_KDBX_PASSWORD or the terminal), then {}",
        sets.join(", ")
    )
}
