//! Decrypting with a passphrase-protected secret key that gpg-agent has not cached (after a
//! reboot, a `gpgconf --kill gpg-agent`): `--batch` cannot ask for the passphrase, so gpg says
//! "No secret key" although the key is in the keyring. charly then looks the key up
//! (`--list-secret-keys --with-colons`) and retries with a passphrase through
//! `--pinentry-mode loopback --passphrase-fd 0` (a pipe, never an argument): the one named by
//! `--passphrase-env VAR` or `CHARLY_GPG_PASSPHRASE`, else the one `secrets gpg setup` stored
//! in the Secret Service (schema `org.gnupg.Passphrase`, attribute `keygrip`). gpg-agent caches
//! it afterwards, as it would after a pinentry.

use std::path::Path;

use super::GpgError;
use super::keys::PASSPHRASE_SCHEMA;
use super::run::{self, KeyInfo};
use crate::credentials::{Keyring, Lookup};

/// The environment variable charly reads a secret key's passphrase from.
pub const PASSPHRASE_VAR: &str = "CHARLY_GPG_PASSPHRASE";

/// Where the passphrase of a protected secret key comes from, when gpg-agent has none cached.
/// Its `Debug` shows where a passphrase came from, never the passphrase.
#[derive(Default)]
pub struct Unlock<'a> {
    /// The given passphrase and where it came from (`--passphrase-env VAR`, `CHARLY_GPG_PASSPHRASE`).
    given: Option<(String, String)>,
    /// The Secret Service to look a stored passphrase up in.
    keyring: Option<&'a Keyring>,
}

impl std::fmt::Debug for Unlock<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unlock")
            .field("given", &self.given.as_ref().map(|(_, source)| source))
            .field("keyring", &self.keyring.is_some())
            .finish()
    }
}

impl<'a> Unlock<'a> {
    /// The passphrase in the variable `passphrase_env` names (or in `CHARLY_GPG_PASSPHRASE` when
    /// none is named; an empty value counts as unset), and the Secret Service `keyring`.
    ///
    /// # Errors
    ///
    /// [`GpgError::PassphraseEnv`] when the named variable is not set.
    pub fn from_env(
        passphrase_env: Option<&str>,
        keyring: Option<&'a Keyring>,
    ) -> Result<Unlock<'a>, GpgError> {
        let given = match passphrase_env {
            Some(var) => {
                let value = std::env::var(var).ok().filter(|v| !v.is_empty());
                Some((
                    value.ok_or_else(|| GpgError::PassphraseEnv(var.to_owned()))?,
                    format!("--passphrase-env {var}"),
                ))
            }
            None => std::env::var(PASSPHRASE_VAR)
                .ok()
                .filter(|v| !v.is_empty())
                .map(|v| (v, PASSPHRASE_VAR.to_owned())),
        };
        Ok(Unlock { given, keyring })
    }

    /// The passphrases to try for `keys`, with where each came from: the given one alone, else
    /// the one stored for a keygrip of theirs.
    fn candidates(&self, keys: &[KeyInfo]) -> Vec<(String, String)> {
        if let Some(given) = &self.given {
            return vec![given.clone()];
        }
        let Some(keyring) = self.keyring else { return Vec::new() };
        for grip in keys.iter().flat_map(|k| k.keygrips.iter()) {
            match keyring.lookup(&[("xdg:schema", PASSPHRASE_SCHEMA), ("keygrip", grip)]) {
                Ok(Lookup::Found(p)) => {
                    return vec![(p, format!("the Secret Service (org.gnupg.Passphrase, keygrip {grip})"))];
                }
                Ok(_) => {}
                // No keyring (or a locked or silent one): nothing stored to try.
                Err(_) => return Vec::new(),
            }
        }
        Vec::new()
    }
}

/// The secret keys of this keyring that hold the secret part of one of `recipients` (key ids).
pub(crate) fn secret_keys_for(recipients: &[String]) -> Result<Vec<KeyInfo>, GpgError> {
    Ok(run::keys(true, None)?
        .into_iter()
        .filter(|k| k.secret_ids().any(|id| recipients.iter().any(|r| r.eq_ignore_ascii_case(id))))
        .collect())
}

/// Decrypts `path`; the plaintext.
///
/// # Errors
///
/// [`GpgError::NotGpg`], [`GpgError::Symmetric`], [`GpgError::NoSecretKey`] (with the
/// recipients), [`GpgError::NeedsPassphrase`], [`GpgError::WrongPassphrase`],
/// [`GpgError::Failed`].
pub(crate) fn decrypt(path: &Path, unlock: &Unlock<'_>) -> Result<Vec<u8>, GpgError> {
    // First: a file that is not GPG, or symmetric (which gpg-agent may even have the
    // passphrase of cached), is refused the same way by every leaf.
    let recipients = run::recipients(path)?;
    let file = path.to_string_lossy();
    let args = ["--quiet", "--decrypt", "--", &file];
    let out = run::gpg(&args, None)?;
    if out.ok {
        return Ok(out.stdout);
    }
    if out.stderr.contains("no valid OpenPGP data") {
        return Err(GpgError::NotGpg(path.to_owned()));
    }
    let failed = |stderr: &str| GpgError::Failed {
        what: format!("decrypt {}", path.display()),
        stderr: run::tail(stderr),
    };
    let here = secret_keys_for(&recipients)?;
    if here.is_empty() {
        if out.stderr.contains("No secret key") {
            return Err(GpgError::NoSecretKey { path: path.to_owned(), recipients });
        }
        return Err(failed(&out.stderr));
    }
    let Some((passphrase, source)) = unlock.candidates(&here).into_iter().next() else {
        return Err(GpgError::NeedsPassphrase {
            path: path.to_owned(),
            keys: here.iter().map(run::describe).collect(),
        });
    };
    let retry = run::gpg_with_passphrase(&passphrase, &args, None)?;
    if retry.ok {
        return Ok(retry.stdout);
    }
    // gpg 2.2 says "Bad passphrase" for some keys and, for an ECDH (cv25519) subkey, only "No
    // secret key" again: the secret key is here, so the passphrase is what it rejected.
    if retry.stderr.contains("Bad passphrase") || retry.stderr.contains("No secret key") {
        return Err(GpgError::WrongPassphrase {
            what: format!("decrypt {}", path.display()),
            origin: source,
        });
    }
    Err(failed(&retry.stderr))
}
