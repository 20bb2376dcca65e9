//! What config.yml holds that no setting reads: a key charly does not know (`secrets:`, a
//! typo such as `run_mod:`), or a section (`engine:`, `vm:`) that is not a mapping. Such
//! entries used to be ignored, so a value written there by hand had no effect and nothing
//! said so; now each is a warning of the `settings.*` leaves.

use yaml_serde::Value;

use super::file::{ConfigFile, KEYRING_KEYS, OAUTH_TOKENS, VNC_PASSWORDS};
use super::keys::KEYS;

/// The sections of the file that are not settings keys: the config backend's credentials and
/// the keyring's index.
const STORES: &[&str] = &[VNC_PASSWORDS, OAUTH_TOKENS, KEYRING_KEYS];

/// One sentence for each entry of `file` that no setting reads, in file order.
pub(super) fn strays(file: &ConfigFile) -> Vec<String> {
    let path = file.path().display();
    let mut out = Vec::new();
    for (key, value) in file.mapping() {
        let Some(key) = key.as_str() else {
            out.push(format!("{path}: a key that is not text ({key:?}) is ignored"));
            continue;
        };
        if STORES.contains(&key) || KEYS.iter().any(|k| k.yaml == [key]) {
            continue;
        }
        let section: Vec<&str> =
            KEYS.iter().filter(|k| k.yaml.len() == 2 && k.yaml[0] == key).map(|k| k.yaml[1]).collect();
        if section.is_empty() {
            out.push(format!("{path}: `{key}:` is not a settings key and is ignored{}", hint(key)));
            continue;
        }
        let names = section.iter().map(|s| format!("{key}.{s}")).collect::<Vec<_>>().join(", ");
        match value {
            Value::Mapping(entries) => {
                for sub in entries.keys() {
                    let sub = sub.as_str().map_or_else(|| format!("{sub:?}"), str::to_owned);
                    if !section.contains(&sub.as_str()) {
                        out.push(format!(
                            "{path}: `{key}.{sub}` is not a settings key and is ignored (the `{key}:` keys: {names})"
                        ));
                    }
                }
            }
            Value::Null => {}
            _ => out.push(format!(
                "{path}: `{key}:` is a section, a mapping of {names} (`{key}: {{{}: ...}}`), not {}; it is ignored",
                section[0],
                shape(value)
            )),
        }
    }
    out
}

/// The setting `key` was likely meant as: the file's spelling of a dotted key
/// (`secrets:` → `secrets_kdbx_path:`), else a key spelled like it (Jaro over 0.7, as clap's
/// suggestions).
fn hint(key: &str) -> String {
    let dotted: Vec<String> = KEYS
        .iter()
        .filter(|k| k.yaml.len() == 1 && k.name.strip_prefix(key).is_some_and(|r| r.starts_with('.')))
        .map(|k| format!("{} is written `{}:`", k.name, k.yaml[0]))
        .collect();
    if !dotted.is_empty() {
        return format!(" (the file spells keys flat: {})", dotted.join(", "));
    }
    let mut best: Option<(f64, &str)> = None;
    for candidate in KEYS.iter().map(|k| k.yaml[0]).chain(STORES.iter().copied()) {
        let score = strsim::jaro(key, candidate);
        if score > 0.7 && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, c)| format!("; did you mean `{c}:`?")).unwrap_or_default()
}

fn shape(value: &Value) -> &'static str {
    match value {
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        _ => "one value",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strays_of(text: &str) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yml");
        std::fs::write(&path, text).unwrap();
        let file = ConfigFile::load(&path).unwrap();
        strays(&file).into_iter().map(|s| s.replace(&format!("{}: ", path.display()), "")).collect()
    }

    #[test]
    fn keys_no_setting_reads_are_named() {
        let text = "run_mode: direct\nvnc_passwords:\n  web: pw\nengine:\n  build: podman\n  colour: red\n\
                    vm: [1, 2]\nsecrets:\n  kdbx_path: /x.kdbx\nrun_mod: quadlet\nzzz: 1\n";
        assert_eq!(
            strays_of(text),
            [
                "`engine.colour` is not a settings key and is ignored (the `engine:` keys: engine.build, engine.run, engine.rootful)",
                "`vm:` is a section, a mapping of vm.backend, vm.disk_size, vm.ram, vm.cpus, vm.rootfs (`vm: {backend: ...}`), not a list; it is ignored",
                "`secrets:` is not a settings key and is ignored (the file spells keys flat: secrets.kdbx_path is written `secrets_kdbx_path:`, secrets.kdbx_key_file is written `secrets_kdbx_key_file:`, secrets.kdbx_cache is written `kdbx_cache:`, secrets.kdbx_cache_timeout is written `kdbx_cache_timeout:`)",
                "`run_mod:` is not a settings key and is ignored; did you mean `run_mode:`?",
                "`zzz:` is not a settings key and is ignored",
            ]
        );
        assert!(strays_of("engine:\n  run: podman\nkeyring_keys: [a/b]\nkdbx_cache: false\n").is_empty());
    }
}
