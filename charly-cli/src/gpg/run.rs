//! Running `gpg` (GnuPG 2.2): always `--batch`, never a pinentry on a terminal that a tool call
//! cannot answer (a passphrase goes through `--pinentry-mode loopback` and a pipe), and the
//! plaintext only through pipes and files charly controls, never through an argument.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::GpgError;

/// The outcome of one `gpg` run.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Output {
    /// Whether gpg exited with 0.
    pub ok: bool,
    /// Its stdout (may be plaintext: never logged).
    pub stdout: Vec<u8>,
    /// Its stderr (gpg's messages; no plaintext).
    pub stderr: String,
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Output").field("ok", &self.ok).field("stderr", &self.stderr).finish_non_exhaustive()
    }
}

/// The `gpg` program on PATH.
///
/// # Errors
///
/// [`GpgError::Missing`].
pub(crate) fn program() -> Result<PathBuf, GpgError> {
    crate::hostfile::which("gpg").ok_or(GpgError::Missing("gpg"))
}

/// Runs `gpg --batch ARGS` with `stdin` on its standard input.
///
/// # Errors
///
/// [`GpgError::Missing`] when gpg is not installed, [`GpgError::Io`] when it cannot run.
pub(crate) fn gpg(args: &[&str], stdin: Option<&[u8]>) -> Result<Output, GpgError> {
    let mut command = Command::new(program()?);
    command.arg("--batch").args(args);
    run(command, stdin)
}

/// Runs `gpg --batch --pinentry-mode loopback --passphrase-fd 0 ARGS` with the passphrase (and
/// then `stdin`) on its standard input.
///
/// # Errors
///
/// As [`gpg`].
pub(crate) fn gpg_with_passphrase(
    passphrase: &str,
    args: &[&str],
    stdin: Option<&[u8]>,
) -> Result<Output, GpgError> {
    let mut input = passphrase.as_bytes().to_vec();
    input.push(b'\n');
    if let Some(more) = stdin {
        input.extend_from_slice(more);
    }
    let mut command = Command::new(program()?);
    command.args(["--batch", "--pinentry-mode", "loopback", "--passphrase-fd", "0"]).args(args);
    run(command, Some(&input))
}

/// Runs another program (`gpgconf`, `gpg-connect-agent`, `systemctl`) the same way.
///
/// # Errors
///
/// [`GpgError::Missing`], [`GpgError::Io`].
pub(crate) fn tool(name: &'static str, args: &[&str]) -> Result<Output, GpgError> {
    let path = crate::hostfile::which(name).ok_or(GpgError::Missing(name))?;
    let mut command = Command::new(path);
    command.args(args);
    run(command, None)
}

fn run(mut command: Command, stdin: Option<&[u8]>) -> Result<Output, GpgError> {
    command.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child =
        command.spawn().map_err(|e| GpgError::Io(format!("cannot run {:?}: {e}", command.get_program())))?;
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().expect("stdin is piped");
        let bytes = bytes.to_vec();
        // Written from a thread: a large input must not deadlock against a full stdout pipe.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }
    let out = child.wait_with_output().map_err(|e| GpgError::Io(format!("gpg did not finish: {e}")))?;
    Ok(Output {
        ok: out.status.success(),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// Refuses a user-given key spec (`argument` names it) that gpg would read as an option: one
/// that starts with `-` (or is empty). Every spec also goes after `--` or as an option's value.
///
/// # Errors
///
/// [`GpgError::BadArgument`].
pub(crate) fn key_spec(argument: &'static str, value: &str) -> Result<(), GpgError> {
    if value.starts_with('-') || value.trim().is_empty() {
        return Err(GpgError::BadArgument { argument, value: value.to_owned() });
    }
    Ok(())
}

/// The key ids an encrypted file is addressed to (`:pubkey enc packet: ... keyid X`), without
/// decrypting it.
///
/// # Errors
///
/// [`GpgError::NotGpg`] when the file holds no OpenPGP data, [`GpgError::Symmetric`] when it is
/// encrypted with a passphrase to no recipient.
pub(crate) fn recipients(path: &Path) -> Result<Vec<String>, GpgError> {
    let file = path.to_string_lossy();
    let out = gpg(&["--list-only", "--list-packets", "--", &file], None)?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut ids: Vec<String> = text
        .lines()
        .filter(|l| l.contains("pubkey enc packet"))
        .filter_map(|l| l.split("keyid ").nth(1))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    ids.dedup();
    if ids.is_empty() && (out.stderr.contains("no valid OpenPGP data") || !text.contains(':')) {
        return Err(GpgError::NotGpg(path.to_owned()));
    }
    if ids.is_empty() && text.lines().any(|l| l.starts_with(":symkey enc packet")) {
        return Err(GpgError::Symmetric(path.to_owned()));
    }
    Ok(ids)
}

/// A key of `gpg --with-colons --list-(secret-)keys`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct KeyInfo {
    /// The primary key's long id.
    pub keyid: String,
    /// The primary key's fingerprint.
    pub fingerprint: String,
    /// The first user id.
    pub uid: String,
    /// Expiry, as seconds since the epoch (empty: never).
    pub expires: String,
    /// The long ids of the primary key and its subkeys.
    pub ids: Vec<String>,
    /// The keygrips of the primary key and its subkeys.
    pub keygrips: Vec<String>,
    /// The ids (of `ids`) whose secret part is not here (`#` in `--list-secret-keys`: a stub).
    pub stubs: Vec<String>,
}

impl KeyInfo {
    /// The ids whose secret part is here (of a `--list-secret-keys` entry).
    pub(crate) fn secret_ids(&self) -> impl Iterator<Item = &str> {
        self.ids.iter().filter(|id| !self.stubs.contains(id)).map(String::as_str)
    }
}

/// The keys of `--list-keys` (or `--list-secret-keys` when `secret`), optionally only `id`.
///
/// # Errors
///
/// [`GpgError::Missing`], [`GpgError::Io`].
pub(crate) fn keys(secret: bool, id: Option<&str>) -> Result<Vec<KeyInfo>, GpgError> {
    let mut args = vec!["--with-colons", "--with-keygrip", "--fixed-list-mode"];
    args.push(if secret { "--list-secret-keys" } else { "--list-keys" });
    if let Some(id) = id {
        args.extend(["--", id]);
    }
    let out = gpg(&args, None)?;
    let mut keys: Vec<KeyInfo> = Vec::new();
    let mut last_fpr_is_primary = false;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let fields: Vec<&str> = line.split(':').collect();
        match fields.first().copied() {
            Some("pub" | "sec") => {
                let stub = fields.get(14).is_some_and(|t| t.starts_with('#'));
                keys.push(KeyInfo {
                    stubs: if stub {
                        vec![fields.get(4).copied().unwrap_or_default().into()]
                    } else {
                        Vec::new()
                    },
                    keyid: fields.get(4).copied().unwrap_or_default().into(),
                    expires: fields.get(6).copied().unwrap_or_default().into(),
                    ids: vec![fields.get(4).copied().unwrap_or_default().into()],
                    ..KeyInfo::default()
                });
                last_fpr_is_primary = true;
            }
            Some("sub" | "ssb") => {
                if let Some(key) = keys.last_mut() {
                    let id: String = fields.get(4).copied().unwrap_or_default().into();
                    if fields.get(14).is_some_and(|t| t.starts_with('#')) {
                        key.stubs.push(id.clone());
                    }
                    key.ids.push(id);
                }
                last_fpr_is_primary = false;
            }
            Some("fpr") if last_fpr_is_primary => {
                if let Some(key) = keys.last_mut() {
                    key.fingerprint = fields.get(9).copied().unwrap_or_default().into();
                }
                last_fpr_is_primary = false;
            }
            Some("grp") => {
                if let Some(key) = keys.last_mut() {
                    key.keygrips.push(fields.get(9).copied().unwrap_or_default().into());
                }
            }
            Some("uid") => {
                if let Some(key) = keys.last_mut().filter(|k| k.uid.is_empty()) {
                    key.uid = fields.get(9).copied().unwrap_or_default().replace("\\x3a", ":");
                }
            }
            _ => {}
        }
    }
    Ok(keys)
}

/// `FINGERPRINT uid`, for an error that lists keys.
pub(crate) fn describe(key: &KeyInfo) -> String {
    format!("{} {}", key.fingerprint, key.uid)
}

/// The one public key `spec` (a key id, fingerprint, email or name; `argument` names where it
/// came from) matches.
///
/// # Errors
///
/// [`GpgError::BadArgument`], [`GpgError::UnknownRecipient`] when it matches none,
/// [`GpgError::Ambiguous`] when it matches several.
pub(crate) fn public_key(argument: &'static str, spec: &str) -> Result<KeyInfo, GpgError> {
    key_spec(argument, spec)?;
    let mut found = keys(false, Some(spec))?;
    match found.len() {
        0 => Err(GpgError::UnknownRecipient(spec.into())),
        1 => Ok(found.remove(0)),
        _ => Err(GpgError::Ambiguous {
            argument,
            spec: spec.into(),
            keys: found.iter().map(describe).collect(),
        }),
    }
}

/// Encrypts `plaintext` to `recipients` (ASCII armour) and writes it to `output` atomically:
/// on any failure the old file is unchanged.
///
/// # Errors
///
/// [`GpgError::NoRecipient`], [`GpgError::UnknownRecipient`], [`GpgError::Failed`],
/// [`GpgError::Io`].
pub(crate) fn encrypt_to(plaintext: &[u8], recipients: &[String], output: &Path) -> Result<(), GpgError> {
    if recipients.is_empty() {
        return Err(GpgError::NoRecipient(output.to_owned()));
    }
    let mut args = vec!["--yes", "--armor", "--encrypt"];
    for r in recipients {
        // As the option's value, gpg never reads it as an option; leading `-` is refused anyway.
        key_spec("recipient", r)?;
        args.push("--recipient");
        args.push(r);
    }
    let out = gpg(&args, Some(plaintext))?;
    if !out.ok {
        if let Some(unknown) = recipients.iter().find(|r| out.stderr.contains(&format!("{r}: skipped"))) {
            return Err(GpgError::UnknownRecipient(unknown.clone()));
        }
        return Err(GpgError::Failed {
            what: format!("encrypt {}", output.display()),
            stderr: tail(&out.stderr),
        });
    }
    crate::hostfile::write_atomic(output, &out.stdout, 0o644).map_err(|e| GpgError::Io(e.to_string()))
}

/// The last lines of gpg's messages, for an error.
pub(crate) fn tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(4)..].join("; ")
}
