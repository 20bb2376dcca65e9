//! `charly secrets gpg ...`: a GPG-encrypted dotenv file of the project (`.secrets`), driving
//! the real `gpg` (REFERENCE.md §5). The plaintext travels through pipes, and through files
//! only where the user names one (`decrypt -o`, mode 0600) or `edit` needs one (a 0700
//! temporary directory, the file zero-filled before it is deleted).
//!
//! Every rewrite is atomic: a missing key, an unknown recipient or a file that is not GPG
//! leaves the file as it was.

mod dotenv;
mod keys;
mod report;
mod run;
mod setup;
mod unlock;

use std::path::{Path, PathBuf};

pub use keys::{export_key, import_key};
pub use report::{
    GpgChanged, GpgDecrypted, GpgDoctor, GpgEnv, GpgExported, GpgImported, GpgPlaintext, GpgRecipients,
    GpgSetup, GpgStep, GpgVar,
};
pub use setup::{SetupArgs, doctor, setup};
pub use unlock::{PASSPHRASE_VAR, Unlock};

use crate::credentials::KeyringError;

/// Why a `secrets gpg` command could not do its work. No variant carries plaintext.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GpgError {
    /// A program is not installed.
    #[error("`{0}` is not installed (Debian: apt-get install gnupg)")]
    Missing(&'static str),
    /// The file holds no OpenPGP data.
    #[error("{} is not a GPG-encrypted file (no OpenPGP data in it); encrypt a dotenv file with \
             `charly secrets gpg encrypt -i .env -o .secrets -r KEY`", .0.display())]
    NotGpg(PathBuf),
    /// The file is encrypted with a passphrase (`gpg -c`), to no recipient.
    #[error("{} is passphrase-encrypted (symmetric, `gpg -c`): passphrase-encrypted files are not supported; \
             re-encrypt it to a recipient (`gpg -d {} > plain.env` on a terminal, then \
             `charly secrets gpg encrypt -i plain.env -o {} -r KEY`)", .0.display(), .0.display(), .0.display())]
    Symmetric(PathBuf),
    /// No secret key of the file's recipients is here.
    #[error("cannot decrypt {}: it is encrypted to {}, and none of their secret keys is in this GnuPG keyring \
             (GNUPGHOME); import yours with `charly secrets gpg import-key`", path.display(),
             if recipients.is_empty() { "no readable recipient".to_owned() } else { recipients.join(", ") })]
    NoSecretKey {
        /// The file.
        path: PathBuf,
        /// Its recipients.
        recipients: Vec<String>,
    },
    /// The secret key is here, but protected by a passphrase gpg-agent has not cached.
    #[error("cannot decrypt {}: its secret key {} is in this GnuPG keyring but needs its passphrase, which \
             gpg-agent has not cached: give it with --passphrase-env VAR (a variable that holds it) or \
             CHARLY_GPG_PASSPHRASE, store it with `charly secrets gpg setup --passphrase ...`, or unlock the key \
             once on a terminal (`gpg --decrypt FILE`)", path.display(), keys.join("; "))]
    NeedsPassphrase {
        /// The file.
        path: PathBuf,
        /// `FINGERPRINT uid` of the secret keys here that could decrypt it.
        keys: Vec<String>,
    },
    /// The passphrase given (or stored) for a secret key is not its passphrase.
    #[error(
        "gpg could not {what}: the passphrase from {origin} is wrong (gpg: Bad passphrase); nothing was changed"
    )]
    WrongPassphrase {
        /// What was tried.
        what: String,
        /// Where the passphrase came from.
        origin: String,
    },
    /// `--passphrase-env VAR` names a variable that is not set.
    #[error(
        "argument `passphrase_env`: the environment variable {0} is not set (or is empty); name the variable \
             that holds the passphrase, not the passphrase itself"
    )]
    PassphraseEnv(String),
    /// A new file needs recipients.
    #[error("{} does not exist yet: pass --recipient KEY (one or more) to create it", .0.display())]
    NoRecipient(PathBuf),
    /// A recipient has no public key here.
    #[error(
        "no usable public key for recipient {0:?} in the GnuPG keyring: import it (`gpg --import`) or check \
             its trust; nothing was written"
    )]
    UnknownRecipient(String),
    /// A key id, recipient or file name that gpg would read as an option.
    #[error(
        "argument `{argument}`: {value:?} starts with `-`, which gpg would read as an option; give a key \
             id, fingerprint or email; nothing was changed"
    )]
    BadArgument {
        /// The argument's name (`key_id`, `recipient`).
        argument: &'static str,
        /// What was given.
        value: String,
    },
    /// A key spec (an email, a name) matches several keys.
    #[error("argument `{argument}`: {spec:?} matches {} keys: {}; give the fingerprint of the one you mean; \
             nothing was changed", keys.len(), keys.join("; "))]
    Ambiguous {
        /// The argument's name (`key_id`, `recipient`).
        argument: &'static str,
        /// What was given.
        spec: String,
        /// `FINGERPRINT uid` of each key it matches.
        keys: Vec<String>,
    },
    /// The file to read does not exist.
    #[error("{} does not exist", .0.display())]
    FileMissing(PathBuf),
    /// Not a variable name.
    #[error("invalid variable name {0:?}: use letters, digits and `_`, not starting with a digit")]
    BadName(String),
    /// A leaf that needs a terminal was called as a tool.
    #[error("{0}")]
    NeedsTerminal(String),
    /// gpg failed otherwise.
    #[error("gpg could not {what}: {stderr}")]
    Failed {
        /// What was tried.
        what: String,
        /// gpg's last messages.
        stderr: String,
    },
    /// The keystore (Secret Service) refused.
    #[error(transparent)]
    Keyring(#[from] KeyringError),
    /// An I/O error (the message names the path).
    #[error("{0}")]
    Io(String),
}

fn read_plain(path: &Path) -> Result<Vec<u8>, GpgError> {
    std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => GpgError::FileMissing(path.to_owned()),
        _ => GpgError::Io(format!("cannot read {}: {e}", path.display())),
    })
}

fn decrypt_existing(path: &Path, unlock: &Unlock<'_>) -> Result<Vec<u8>, GpgError> {
    if !path.is_file() {
        return Err(GpgError::FileMissing(path.to_owned()));
    }
    unlock::decrypt(path, unlock)
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `secrets gpg show`.
///
/// # Errors
///
/// [`GpgError::FileMissing`], [`GpgError::NotGpg`], [`GpgError::NoSecretKey`].
pub fn show(file: &Path, unlock: &Unlock<'_>) -> Result<GpgPlaintext, GpgError> {
    Ok(GpgPlaintext { file: file.display().to_string(), plaintext: text(decrypt_existing(file, unlock)?) })
}

/// `secrets gpg env`: a missing file gives no variables.
///
/// # Errors
///
/// As [`show`], but not for a missing file.
pub fn env(file: &Path, unlock: &Unlock<'_>) -> Result<GpgEnv, GpgError> {
    if !file.exists() {
        return Ok(GpgEnv { file: file.display().to_string(), exists: false, vars: Vec::new() });
    }
    let plaintext = text(unlock::decrypt(file, unlock)?);
    // In file order (the parser's map is sorted): walk the lines, keep the last assignment.
    let parsed = crate::config::parse_dotenv(&plaintext);
    let mut vars: Vec<GpgVar> = Vec::new();
    for line in plaintext.lines() {
        let line = line.trim();
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, _)) = line.split_once('=') else { continue };
        let key = key.trim();
        if let Some(value) = parsed.get(key).filter(|_| !vars.iter().any(|v| v.key == key)) {
            vars.push(GpgVar { key: key.into(), value: value.clone() });
        }
    }
    Ok(GpgEnv { file: file.display().to_string(), exists: true, vars })
}

/// `secrets gpg decrypt`: to `output` (mode 0600), or into the report when `output` is `None`
/// (the caller allows that on a terminal only).
///
/// # Errors
///
/// As [`show`]; [`GpgError::Io`] when the output cannot be written.
pub fn decrypt(input: &Path, output: Option<&Path>, unlock: &Unlock<'_>) -> Result<GpgDecrypted, GpgError> {
    let plaintext = decrypt_existing(input, unlock)?;
    let input_name = input.display().to_string();
    match output {
        Some(out) => {
            crate::hostfile::write_atomic(out, &plaintext, 0o600).map_err(|e| GpgError::Io(e.to_string()))?;
            Ok(GpgDecrypted { input: input_name, output: Some(out.display().to_string()), plaintext: None })
        }
        None => Ok(GpgDecrypted { input: input_name, output: None, plaintext: Some(text(plaintext)) }),
    }
}

/// `secrets gpg encrypt`.
///
/// # Errors
///
/// [`GpgError::FileMissing`], [`GpgError::UnknownRecipient`], [`GpgError::NoRecipient`].
pub fn encrypt(input: &Path, output: &Path, recipients: &[String]) -> Result<GpgChanged, GpgError> {
    for r in recipients {
        run::public_key("recipient", r)?;
    }
    let plaintext = read_plain(input)?;
    run::encrypt_to(&plaintext, recipients, output)?;
    Ok(GpgChanged {
        file: output.display().to_string(),
        action: format!("encrypted {}", input.display()),
        changed: true,
        recipients: recipients.to_vec(),
    })
}

/// Decrypts `file` (or starts empty for `new_recipients` when it does not exist), applies
/// `edit` to the text, re-encrypts to the same recipients (plus `extra`) when the text or the
/// recipients changed.
fn rewrite(
    file: &Path,
    unlock: &Unlock<'_>,
    new_recipients: &[String],
    extra: Option<&str>,
    edit: impl FnOnce(&str) -> Option<String>,
) -> Result<(bool, Vec<String>), GpgError> {
    let (plaintext, mut recipients) = if file.exists() {
        let recipients = run::recipients(file)?;
        (text(unlock::decrypt(file, unlock)?), recipients)
    } else if new_recipients.is_empty() {
        return Err(GpgError::NoRecipient(file.to_owned()));
    } else {
        (String::new(), new_recipients.to_vec())
    };
    if let Some(more) = extra {
        recipients.push(more.to_owned());
    }
    match edit(&plaintext) {
        Some(new_text) if new_text != plaintext || extra.is_some() || !file.exists() => {
            run::encrypt_to(new_text.as_bytes(), &recipients, file)?;
            Ok((true, recipients))
        }
        _ => Ok((false, recipients)),
    }
}

/// `secrets gpg set KEY VALUE`.
///
/// # Errors
///
/// [`GpgError::BadName`], [`GpgError::NoRecipient`] for a new file without `--recipient`, and
/// the errors of decrypting and encrypting.
pub fn set(
    file: &Path,
    key: &str,
    value: &str,
    recipients: &[String],
    unlock: &Unlock<'_>,
) -> Result<GpgChanged, GpgError> {
    if !dotenv::is_name(key) {
        return Err(GpgError::BadName(key.into()));
    }
    if !file.exists() {
        for r in recipients {
            run::public_key("recipient", r)?;
        }
    }
    let (changed, recipients) =
        rewrite(file, unlock, recipients, None, |t| Some(dotenv::upsert(t, key, value)))?;
    let action = if changed { format!("set {key}") } else { format!("{key} already has that value") };
    Ok(GpgChanged { file: file.display().to_string(), action, changed, recipients })
}

/// `secrets gpg unset KEY`.
///
/// # Errors
///
/// [`GpgError::FileMissing`], and the errors of decrypting and encrypting.
pub fn unset(file: &Path, key: &str, unlock: &Unlock<'_>) -> Result<GpgChanged, GpgError> {
    if !file.exists() {
        return Err(GpgError::FileMissing(file.to_owned()));
    }
    let (changed, recipients) = rewrite(file, unlock, &[], None, |t| dotenv::unset(t, key))?;
    let action = if changed { format!("unset {key}") } else { format!("{key} was not set") };
    Ok(GpgChanged { file: file.display().to_string(), action, changed, recipients })
}

/// `secrets gpg add-recipient ID`.
///
/// # Errors
///
/// [`GpgError::BadArgument`], [`GpgError::FileMissing`], [`GpgError::UnknownRecipient`], and the
/// errors of decrypting.
pub fn add_recipient(file: &Path, key_id: &str, unlock: &Unlock<'_>) -> Result<GpgChanged, GpgError> {
    run::key_spec("key_id", key_id)?;
    if !file.exists() {
        return Err(GpgError::FileMissing(file.to_owned()));
    }
    let current = run::recipients(file)?;
    let key = run::public_key("key_id", key_id)?;
    if key.ids.iter().any(|id| current.iter().any(|c| c.eq_ignore_ascii_case(id))) {
        return Ok(GpgChanged {
            file: file.display().to_string(),
            action: format!("key {key_id} is already a recipient"),
            changed: false,
            recipients: current,
        });
    }
    let (changed, recipients) = rewrite(file, unlock, &[], Some(&key.fingerprint), |t| Some(t.to_owned()))?;
    Ok(GpgChanged {
        file: file.display().to_string(),
        action: format!("added recipient {key_id}"),
        changed,
        recipients,
    })
}

/// `secrets gpg recipients`.
///
/// # Errors
///
/// [`GpgError::FileMissing`], [`GpgError::NotGpg`], [`GpgError::Symmetric`].
pub fn recipients(file: &Path) -> Result<GpgRecipients, GpgError> {
    if !file.is_file() {
        return Err(GpgError::FileMissing(file.to_owned()));
    }
    Ok(GpgRecipients { file: file.display().to_string(), recipients: run::recipients(file)? })
}

/// `secrets gpg edit` (a terminal only): decrypt into a private temporary file, run `$EDITOR`
/// (default `vi`), re-encrypt to the same recipients when the text changed; the temporary file
/// is zero-filled, then deleted.
///
/// # Errors
///
/// The errors of decrypting and encrypting; [`GpgError::Failed`] when the editor fails.
pub fn edit(file: &Path, unlock: &Unlock<'_>) -> Result<GpgChanged, GpgError> {
    let original = text(decrypt_existing(file, unlock)?);
    let dir = tempfile::Builder::new()
        .prefix("charly-gpg-edit-")
        .tempdir()
        .map_err(|e| GpgError::Io(e.to_string()))?;
    let scratch = dir.path().join("secrets.env");
    crate::hostfile::write_atomic(&scratch, original.as_bytes(), 0o600)
        .map_err(|e| GpgError::Io(e.to_string()))?;
    let editor = std::env::var("VISUAL").or_else(|_| std::env::var("EDITOR")).unwrap_or_else(|_| "vi".into());
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&scratch)
        .status();
    let edited = std::fs::read(&scratch).unwrap_or_default();
    let _ = std::fs::write(&scratch, vec![0u8; edited.len().max(original.len())]);
    let _ = std::fs::remove_file(&scratch);
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => {
            return Err(GpgError::Failed {
                what: format!("edit with {editor}"),
                stderr: format!("the editor exited with {s}"),
            });
        }
        Err(e) => return Err(GpgError::Failed { what: format!("start {editor}"), stderr: e.to_string() }),
    }
    let edited = text(edited);
    let (changed, recipients) = rewrite(file, unlock, &[], None, |_| Some(edited))?;
    let action = if changed { "edited".into() } else { "no changes made".into() };
    Ok(GpgChanged { file: file.display().to_string(), action, changed, recipients })
}
