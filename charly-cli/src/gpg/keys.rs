//! `secrets gpg import-key` / `export-key`: key files in a directory (`public.asc`,
//! `secret.asc`, `ownertrust.txt`), or backups in the Secret Service (schema `org.gnupg.Key`,
//! attributes `keyid` and `uid`; passphrases under `org.gnupg.Passphrase`, attribute
//! `keygrip`), as the reference's `secret-tool` calls store them.

use std::path::Path;

use super::GpgError;
use super::report::{GpgExported, GpgImported};
use super::run::{self, KeyInfo};
use crate::credentials::Keyring;

/// The Secret Service schema of key backups.
pub(crate) const KEY_SCHEMA: &str = "org.gnupg.Key";
/// The Secret Service schema of passphrases.
pub(crate) const PASSPHRASE_SCHEMA: &str = "org.gnupg.Passphrase";

fn imported(status: &str) -> Vec<String> {
    let mut keys: Vec<String> = status
        .lines()
        .filter_map(|l| l.strip_prefix("[GNUPG:] IMPORT_OK "))
        .filter_map(|rest| rest.split_whitespace().nth(1))
        .map(str::to_owned)
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// Checks `passphrase` against the secret keys in `bytes` before they reach the keyring: they
/// are imported into a scratch GNUPGHOME (its own gpg-agent, stopped afterwards) and exported
/// from there with the passphrase, which gpg-agent checks. Public keys only: nothing to check.
fn check_passphrase(bytes: &[u8], passphrase: &str, what: &str) -> Result<(), GpgError> {
    let scratch = tempfile::Builder::new()
        .prefix("charly-gpg-check-")
        .tempdir()
        .map_err(|e| GpgError::Io(format!("cannot make a scratch GnuPG home: {e}")))?;
    let home = scratch.path().to_string_lossy().into_owned();
    let checked = (|| {
        let out = run::gpg(&["--homedir", &home, "--status-fd", "1", "--import"], Some(bytes))?;
        let status = String::from_utf8_lossy(&out.stdout).into_owned();
        // IMPORT_OK <flags> <fpr>: flag 16 is "contains a secret key".
        let secret: Vec<&str> = status
            .lines()
            .filter_map(|l| l.strip_prefix("[GNUPG:] IMPORT_OK "))
            .filter_map(|rest| rest.split_once(' '))
            .filter(|(flags, _)| flags.parse::<u32>().is_ok_and(|f| f & 16 != 0))
            .map(|(_, fpr)| fpr.trim())
            .collect();
        for fpr in secret {
            let args = ["--homedir", &home, "--armor", "--export-secret-keys", "--", fpr];
            let out = run::gpg_with_passphrase(passphrase, &args, None)?;
            if !out.ok || out.stdout.is_empty() {
                return Err(if out.stderr.contains("Bad passphrase") {
                    GpgError::WrongPassphrase {
                        what: format!("import {what}"),
                        origin: "--passphrase (CHARLY_GPG_PASSPHRASE)".into(),
                    }
                } else {
                    GpgError::Failed {
                        what: format!("check the passphrase of {fpr}"),
                        stderr: run::tail(&out.stderr),
                    }
                });
            }
        }
        Ok(())
    })();
    let _ = run::tool("gpgconf", &["--homedir", &home, "--kill", "gpg-agent"]);
    checked
}

fn import_bytes(bytes: &[u8], passphrase: Option<&str>, what: &str) -> Result<Vec<String>, GpgError> {
    if let Some(p) = passphrase {
        check_passphrase(bytes, p, what)?;
    }
    let args = ["--status-fd", "1", "--import"];
    let out = match passphrase {
        Some(p) => run::gpg_with_passphrase(p, &args, Some(bytes))?,
        None => run::gpg(&args, Some(bytes))?,
    };
    let keys = imported(&String::from_utf8_lossy(&out.stdout));
    if !out.ok && keys.is_empty() {
        return Err(GpgError::Failed { what: format!("import {what}"), stderr: run::tail(&out.stderr) });
    }
    Ok(keys)
}

/// `secrets gpg import-key [PATH] [--from-keystore] [--key-id] [--passphrase]`.
///
/// # Errors
///
/// [`GpgError::FileMissing`], [`GpgError::Failed`], [`GpgError::Keyring`];
/// [`GpgError::WrongPassphrase`] when `passphrase` is given and is not the passphrase of a
/// secret key being imported (checked in a scratch GnuPG home first: nothing is imported).
pub fn import_key(
    path: Option<&Path>,
    from_keystore: bool,
    key_id: Option<&str>,
    passphrase: Option<&str>,
    keyring: &Keyring,
) -> Result<GpgImported, GpgError> {
    if let Some(id) = key_id {
        run::key_spec("key_id", id)?;
    }
    let mut report = GpgImported { sources: Vec::new(), keys: Vec::new(), ownertrust: false };
    if from_keystore {
        let mut attributes = vec![("xdg:schema", KEY_SCHEMA)];
        if let Some(id) = key_id {
            attributes.push(("keyid", id));
        }
        for found in keyring.search(&attributes)? {
            let Some(secret) = found.secret else {
                return Err(crate::credentials::KeyringError::Locked.into());
            };
            report.keys.extend(import_bytes(&secret, passphrase, &found.label)?);
            report.sources.push(format!("Secret Service: {}", found.label));
        }
    } else {
        let Some(path) = path else {
            return Err(GpgError::NeedsTerminal(
                "import-key needs a key file or directory, or --from-keystore".into(),
            ));
        };
        let files: Vec<std::path::PathBuf> = if path.is_dir() {
            let mut files: Vec<_> = std::fs::read_dir(path)
                .map_err(|e| GpgError::Io(format!("cannot read {}: {e}", path.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "asc" || x == "gpg"))
                .collect();
            files.sort();
            files
        } else if path.is_file() {
            vec![path.to_owned()]
        } else {
            return Err(GpgError::FileMissing(path.to_owned()));
        };
        for file in &files {
            let bytes = std::fs::read(file)
                .map_err(|e| GpgError::Io(format!("cannot read {}: {e}", file.display())))?;
            report.keys.extend(import_bytes(&bytes, passphrase, &file.display().to_string())?);
            report.sources.push(file.display().to_string());
        }
        let trust = path.join("ownertrust.txt");
        if path.is_dir() && trust.is_file() {
            let out = run::gpg(&["--import-ownertrust", "--", &trust.to_string_lossy()], None)?;
            if !out.ok {
                return Err(GpgError::Failed {
                    what: "import the ownertrust".into(),
                    stderr: run::tail(&out.stderr),
                });
            }
            report.ownertrust = true;
        }
    }
    report.keys.sort();
    report.keys.dedup();
    Ok(report)
}

/// The secret key `key_id` names, or the only one.
pub(super) fn secret_key(key_id: Option<&str>) -> Result<KeyInfo, GpgError> {
    let keys = run::keys(true, key_id)?;
    match (keys.len(), key_id) {
        (1, _) => Ok(keys.into_iter().next().expect("one key")),
        (0, Some(id)) => Err(GpgError::UnknownRecipient(id.into())),
        (0, None) => Err(GpgError::NeedsTerminal(
            "there is no secret key in this GnuPG keyring: import one (import-key) or run `charly secrets gpg setup`".into(),
        )),
        (_, Some(id)) => Err(GpgError::Ambiguous {
            argument: "key_id",
            spec: id.into(),
            keys: keys.iter().map(run::describe).collect(),
        }),
        (_, None) => Err(GpgError::NeedsTerminal(format!(
            "several secret keys ({}): pass --key-id with the fingerprint of the one you mean",
            keys.iter().map(run::describe).collect::<Vec<_>>().join("; ")
        ))),
    }
}

fn export(args: &[&str], passphrase: Option<&str>) -> Result<Vec<u8>, GpgError> {
    let out = match passphrase {
        Some(p) => run::gpg_with_passphrase(p, args, None)?,
        None => run::gpg(args, None)?,
    };
    if !out.ok || out.stdout.is_empty() {
        return Err(match passphrase {
            Some(_) if out.stderr.contains("Bad passphrase") => GpgError::WrongPassphrase {
                what: "export the secret key".into(),
                origin: "--passphrase (CHARLY_GPG_PASSPHRASE)".into(),
            },
            Some(_) => GpgError::Failed { what: "export the key".into(), stderr: run::tail(&out.stderr) },
            None => GpgError::Failed {
                what: "export the key (a protected secret key needs --passphrase)".into(),
                stderr: run::tail(&out.stderr),
            },
        });
    }
    Ok(out.stdout)
}

/// `secrets gpg export-key [DIR] [--to-keystore] [--key-id] [--passphrase]`.
///
/// # Errors
///
/// [`GpgError::Failed`] (a protected key without its passphrase), [`GpgError::WrongPassphrase`],
/// [`GpgError::Keyring`], [`GpgError::Io`].
pub fn export_key(
    dir: Option<&Path>,
    to_keystore: bool,
    key_id: Option<&str>,
    passphrase: Option<&str>,
    keyring: &Keyring,
) -> Result<GpgExported, GpgError> {
    if let Some(id) = key_id {
        run::key_spec("key_id", id)?;
    }
    let key = secret_key(key_id)?;
    let fpr = key.fingerprint.clone();
    let secret = export(&["--armor", "--export-secret-keys", "--", &fpr], passphrase)?;
    let mut written = Vec::new();
    if to_keystore {
        let label = format!("GPG Key: {} ({})", key.uid, key.keyid);
        keyring.store(
            &label,
            &[("xdg:schema", KEY_SCHEMA), ("keyid", &key.keyid), ("uid", &key.uid)],
            &secret,
        )?;
        written.push(label);
        if let (Some(p), Some(grip)) = (passphrase.filter(|p| !p.is_empty()), key.keygrips.first()) {
            let label = format!("GnuPG passphrase: {grip}");
            keyring.store(&label, &[("xdg:schema", PASSPHRASE_SCHEMA), ("keygrip", grip)], p.as_bytes())?;
            written.push(label);
        }
    } else {
        let Some(dir) = dir else {
            return Err(GpgError::NeedsTerminal("export-key needs a directory, or --to-keystore".into()));
        };
        let public = export(&["--armor", "--export", "--", &fpr], None)?;
        let trust = run::gpg(&["--export-ownertrust"], None)?;
        let io = |e: std::io::Error| GpgError::Io(e.to_string());
        crate::hostfile::write_atomic(&dir.join("public.asc"), &public, 0o644).map_err(io)?;
        crate::hostfile::write_atomic(&dir.join("secret.asc"), &secret, 0o600).map_err(io)?;
        crate::hostfile::write_atomic(&dir.join("ownertrust.txt"), &trust.stdout, 0o600).map_err(io)?;
        for name in ["public.asc", "secret.asc", "ownertrust.txt"] {
            written.push(dir.join(name).display().to_string());
        }
    }
    Ok(GpgExported { key: fpr, uid: key.uid, written })
}
