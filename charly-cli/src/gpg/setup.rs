//! `secrets gpg setup` and `secrets gpg doctor`: gpg-agent's configuration, a key, the
//! passphrase in the Secret Service, and a check of all of it with the fixes.

use std::path::{Path, PathBuf};

use super::GpgError;
use super::keys::{self, PASSPHRASE_SCHEMA};
use super::report::{GpgDoctor, GpgSetup, GpgStep};
use super::run;
use crate::credentials::{Keyring, KeyringState};

/// `GNUPGHOME`, else `~/.gnupg`.
pub(crate) fn gnupg_home() -> PathBuf {
    std::env::var_os("GNUPGHOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::hostfile::home().join(".gnupg"))
}

/// The gpg-agent.conf charly writes.
pub(crate) fn agent_conf() -> String {
    let mut conf = String::from("# Written by `charly secrets gpg setup`.\n");
    for pinentry in ["/usr/bin/pinentry-qt", "/usr/bin/pinentry-gnome3"] {
        if Path::new(pinentry).exists() {
            conf.push_str(&format!("pinentry-program {pinentry}\n"));
            break;
        }
    }
    conf.push_str(
        "default-cache-ttl 28800\nmax-cache-ttl 43200\nallow-preset-passphrase\nallow-loopback-pinentry\n",
    );
    conf
}

/// The options of `setup`.
#[derive(Clone, Default)]
pub struct SetupArgs<'a> {
    /// Import keys from this file or directory.
    pub import: Option<&'a Path>,
    /// Import the key backups of the Secret Service.
    pub from_keystore: bool,
    /// The key's passphrase.
    pub passphrase: Option<&'a str>,
    /// The key to use.
    pub key_id: Option<&'a str>,
    /// Name and email of a new key.
    pub name: Option<&'a str>,
    /// Email of a new key.
    pub email: Option<&'a str>,
    /// `rsa4096` or `ed25519`, for a new key.
    pub algo: &'a str,
    /// Leave the Secret Service alone.
    pub skip_secret_service: bool,
}

impl std::fmt::Debug for SetupArgs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SetupArgs")
            .field("import", &self.import)
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

fn git_config(key: &str) -> Option<String> {
    let out = std::process::Command::new("git").args(["config", "--global", key]).output().ok()?;
    let value = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out.status.success() && !value.is_empty()).then_some(value)
}

fn generate(args: &SetupArgs<'_>, passphrase: &str) -> Result<String, String> {
    let name = args
        .name
        .map(str::to_owned)
        .or_else(|| git_config("user.name"))
        .ok_or("no --name (and no git user.name)")?;
    let email = args
        .email
        .map(str::to_owned)
        .or_else(|| git_config("user.email"))
        .ok_or("no --email (and no git user.email)")?;
    let uid = format!("{name} <{email}>");
    let (primary, sub) = match args.algo {
        "ed25519" => ("ed25519", "cv25519"),
        _ => ("rsa4096", "rsa4096"),
    };
    let out = run::gpg_with_passphrase(
        passphrase,
        &["--quick-gen-key", "--", &uid, primary, "sign,cert", "2y"],
        None,
    )
    .map_err(|e| e.to_string())?;
    if !out.ok {
        return Err(run::tail(&out.stderr));
    }
    let key = keys::secret_key(Some(&uid)).map_err(|e| e.to_string())?;
    let out = run::gpg_with_passphrase(
        passphrase,
        &["--quick-add-key", "--", &key.fingerprint, sub, "encr", "2y"],
        None,
    )
    .map_err(|e| e.to_string())?;
    if !out.ok {
        return Err(run::tail(&out.stderr));
    }
    Ok(key.fingerprint)
}

/// `secrets gpg setup`: the seven steps of REFERENCE.md §5; a failed step that later ones need
/// stops the run there.
///
/// # Errors
///
/// [`GpgError::Missing`] when gpg is not installed.
pub fn setup(args: &SetupArgs<'_>, keyring: &Keyring) -> Result<GpgSetup, GpgError> {
    if let Some(id) = args.key_id {
        run::key_spec("key_id", id)?;
    }
    let mut steps = Vec::new();
    run::program()?;
    let missing: Vec<&str> = ["gpg-connect-agent", "gpgconf"]
        .into_iter()
        .filter(|t| crate::hostfile::which(t).is_none())
        .collect();
    steps.push(if missing.is_empty() {
        GpgStep::new("prerequisites", "ok", "gpg, gpg-connect-agent and gpgconf are installed")
    } else {
        GpgStep::new("prerequisites", "warning", format!("missing: {} (Debian: gnupg)", missing.join(", ")))
    });

    let home = gnupg_home();
    let conf_path = home.join("gpg-agent.conf");
    let conf = agent_conf();
    let step = match std::fs::read_to_string(&conf_path) {
        Ok(existing) if existing == conf => {
            GpgStep::new("gpg-agent.conf", "ok", format!("{} is up to date", conf_path.display()))
        }
        existing => {
            let backup = existing.is_ok().then(|| conf_path.with_extension("conf.bak"));
            let written = backup
                .as_ref()
                .map_or(Ok(()), |b| std::fs::copy(&conf_path, b).map(|_| ()))
                .and_then(|()| crate::hostfile::write_atomic(&conf_path, conf.as_bytes(), 0o600));
            match (written, backup) {
                (Ok(()), Some(b)) => GpgStep::new(
                    "gpg-agent.conf",
                    "ok",
                    format!("wrote {} (old one in {})", conf_path.display(), b.display()),
                ),
                (Ok(()), None) => {
                    GpgStep::new("gpg-agent.conf", "ok", format!("wrote {}", conf_path.display()))
                }
                (Err(e), _) => GpgStep::new("gpg-agent.conf", "failed", e.to_string()),
            }
        }
    };
    steps.push(step);

    let sockets =
        run::tool("systemctl", &["--user", "enable", "--now", "gpg-agent.socket", "gpg-agent-extra.socket"]);
    steps.push(match sockets {
        Ok(out) if out.ok => {
            GpgStep::new("agent sockets", "ok", "gpg-agent.socket and gpg-agent-extra.socket enabled")
        }
        Ok(out) => GpgStep::new(
            "agent sockets",
            "warning",
            format!("systemctl --user failed: {}", run::tail(&out.stderr)),
        ),
        Err(e) => GpgStep::new("agent sockets", "warning", e.to_string()),
    });

    let _ = run::tool("gpgconf", &["--kill", "gpg-agent"]);
    steps.push(match run::tool("gpg-connect-agent", &["/bye"]) {
        Ok(out) if out.ok => GpgStep::new("agent", "ok", "gpg-agent restarted with the new configuration"),
        Ok(out) => GpgStep::new("agent", "warning", run::tail(&out.stderr)),
        Err(e) => GpgStep::new("agent", "warning", e.to_string()),
    });

    let key = if args.import.is_some() || args.from_keystore {
        match keys::import_key(args.import, args.from_keystore, args.key_id, args.passphrase, keyring) {
            Ok(imported) => {
                steps.push(GpgStep::new("key", "ok", format!("imported {}", imported.keys.join(", "))));
                keys::secret_key(args.key_id).ok()
            }
            Err(e) => {
                steps.push(GpgStep::new("key", "failed", e.to_string()));
                None
            }
        }
    } else {
        match keys::secret_key(args.key_id) {
            Ok(key) => {
                steps.push(GpgStep::new("key", "ok", format!("using {} {}", key.fingerprint, key.uid)));
                Some(key)
            }
            Err(_) if run::keys(true, None).map(|k| k.is_empty()).unwrap_or(false) => match args.passphrase {
                None => {
                    steps.push(GpgStep::new(
                        "key",
                        "failed",
                        "no secret key; generating one needs --passphrase (empty for none)",
                    ));
                    None
                }
                Some(p) => match generate(args, p) {
                    Ok(fpr) => {
                        steps.push(GpgStep::new("key", "ok", format!("generated {fpr} ({})", args.algo)));
                        keys::secret_key(Some(&fpr)).ok()
                    }
                    Err(e) => {
                        steps.push(GpgStep::new("key", "failed", format!("cannot generate a key: {e}")));
                        None
                    }
                },
            },
            Err(e) => {
                steps.push(GpgStep::new("key", "failed", e.to_string()));
                None
            }
        }
    };
    let Some(key) = key else { return Ok(GpgSetup { steps, key: None }) };

    let passphrase = args.passphrase.unwrap_or_default();
    let step = if args.skip_secret_service {
        GpgStep::new("Secret Service", "skipped", "--skip-secret-service")
    } else if passphrase.is_empty() {
        GpgStep::new("Secret Service", "skipped", "no passphrase to store")
    } else {
        match keyring.probe() {
            KeyringState::Available => {
                let stored: Result<(), _> = key.keygrips.iter().try_for_each(|grip| {
                    keyring.store(
                        &format!("GnuPG passphrase: {grip}"),
                        &[("xdg:schema", PASSPHRASE_SCHEMA), ("keygrip", grip)],
                        passphrase.as_bytes(),
                    )
                });
                match stored {
                    Ok(()) => GpgStep::new(
                        "Secret Service",
                        "ok",
                        format!("passphrase stored for {} keygrip(s)", key.keygrips.len()),
                    ),
                    Err(e) => GpgStep::new("Secret Service", "failed", e.to_string()),
                }
            }
            state => GpgStep::new(
                "Secret Service",
                "warning",
                format!("the keyring is {}: passphrase not stored", state.word()),
            ),
        }
    };
    steps.push(step);

    let probe = b"charly gpg setup check\n";
    let verified = run::gpg(&["--armor", "--encrypt", "--recipient", &key.fingerprint], Some(probe))
        .and_then(|out| {
            if !out.ok {
                return Err(GpgError::Failed {
                    what: "encrypt a test message".into(),
                    stderr: run::tail(&out.stderr),
                });
            }
            let back = run::gpg_with_passphrase(passphrase, &["--quiet", "--decrypt"], Some(&out.stdout))?;
            if back.ok && back.stdout == probe {
                Ok(())
            } else {
                Err(GpgError::Failed {
                    what: "decrypt a test message".into(),
                    stderr: run::tail(&back.stderr),
                })
            }
        });
    steps.push(match verified {
        Ok(()) => GpgStep::new("verify", "ok", "encrypted and decrypted a test message"),
        Err(e) => GpgStep::new("verify", "failed", e.to_string()),
    });
    Ok(GpgSetup { steps, key: Some(key.fingerprint) })
}

/// `secrets gpg doctor`: failed checks are issues (exit 1); warnings are advice.
///
/// # Errors
///
/// None in practice: a missing gpg is a failed check.
pub fn doctor(file: &Path, keyring: &Keyring, unlock: &super::Unlock<'_>) -> Result<GpgDoctor, GpgError> {
    let mut checks = Vec::new();
    let version = std::process::Command::new("gpg").arg("--version").output();
    match version {
        Ok(out) if out.status.success() => {
            let first = String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or_default().to_owned();
            checks.push(GpgStep::new("gpg", "ok", first));
        }
        _ => {
            checks.push(GpgStep::new(
                "gpg",
                "failed",
                "gpg is not installed (Debian: apt-get install gnupg)",
            ));
            return Ok(GpgDoctor { issues: 1, checks });
        }
    }
    checks.push(match run::tool("gpg-connect-agent", &["/bye"]) {
        Ok(out) if out.ok => GpgStep::new("agent", "ok", "gpg-agent answers"),
        _ => GpgStep::new("agent", "warning", "gpg-agent does not answer: run `gpg-connect-agent /bye`"),
    });
    let conf_path = gnupg_home().join("gpg-agent.conf");
    checks.push(match std::fs::read_to_string(&conf_path) {
        Ok(conf) => {
            let settings: Vec<&str> = conf
                .lines()
                .filter(|l| l.starts_with("pinentry-program") || l.contains("cache-ttl"))
                .collect();
            GpgStep::new("gpg-agent.conf", "ok", format!("{}: {}", conf_path.display(), settings.join(", ")))
        }
        Err(_) => GpgStep::new(
            "gpg-agent.conf",
            "warning",
            format!("{} is missing: run `charly secrets gpg setup`", conf_path.display()),
        ),
    });
    checks.push(match run::tool("systemctl", &["--user", "is-enabled", "gpg-agent.socket"]) {
        Ok(out) if out.ok => GpgStep::new("agent sockets", "ok", "gpg-agent.socket is enabled"),
        _ => GpgStep::new(
            "agent sockets",
            "warning",
            "gpg-agent.socket is not enabled (or there is no systemd user manager)",
        ),
    });
    let secret = run::keys(true, None).unwrap_or_default();
    if secret.is_empty() {
        checks.push(GpgStep::new(
            "secret keys",
            "failed",
            "no secret key: run `charly secrets gpg setup` or import-key",
        ));
    } else {
        let list: Vec<String> = secret
            .iter()
            .map(|k| {
                format!(
                    "{} {} (expires {})",
                    k.keyid,
                    k.uid,
                    if k.expires.is_empty() { "never" } else { &k.expires }
                )
            })
            .collect();
        checks.push(GpgStep::new("secret keys", "ok", list.join("; ")));
    }
    let state = keyring.probe();
    if state == KeyringState::Available {
        checks.push(GpgStep::new("Secret Service", "ok", "org.freedesktop.secrets answers, unlocked"));
        let grips: Vec<&String> = secret.iter().flat_map(|k| k.keygrips.iter()).collect();
        let stored = grips
            .iter()
            .filter(|g| {
                keyring
                    .search(&[("xdg:schema", PASSPHRASE_SCHEMA), ("keygrip", g.as_str())])
                    .is_ok_and(|f| !f.is_empty())
            })
            .count();
        let status = if stored == grips.len() { "ok" } else { "warning" };
        checks.push(GpgStep::new(
            "passphrases",
            status,
            format!("{stored} of {} keygrip(s) have a stored passphrase", grips.len()),
        ));
        let backups = keyring.search(&[("xdg:schema", keys::KEY_SCHEMA)]).map(|f| f.len()).unwrap_or(0);
        checks.push(GpgStep::new(
            "key backups",
            if backups > 0 { "ok" } else { "warning" },
            format!("{backups} in the Secret Service"),
        ));
    } else {
        checks.push(GpgStep::new("Secret Service", "warning", format!("the keyring is {}", state.word())));
    }
    if file.is_file() {
        match run::recipients(file) {
            Ok(recipients) => {
                let ours: Vec<&String> = recipients
                    .iter()
                    .filter(|r| secret.iter().any(|k| k.secret_ids().any(|id| id.eq_ignore_ascii_case(r))))
                    .collect();
                checks.push(if ours.is_empty() {
                    GpgStep::new(
                        "recipients",
                        "failed",
                        format!(
                            "{} is encrypted to {}; none of these secret keys is here",
                            file.display(),
                            recipients.join(", ")
                        ),
                    )
                } else {
                    GpgStep::new(
                        "recipients",
                        "ok",
                        format!(
                            "{} is encrypted to {} ({} here)",
                            file.display(),
                            recipients.join(", "),
                            ours.len()
                        ),
                    )
                });
                checks.push(match super::unlock::decrypt(file, unlock) {
                    Ok(_) => GpgStep::new("decrypt", "ok", format!("{} decrypts", file.display())),
                    Err(e) => GpgStep::new("decrypt", "failed", e.to_string()),
                });
            }
            Err(e) => checks.push(GpgStep::new("recipients", "failed", e.to_string())),
        }
    } else {
        checks.push(GpgStep::new("secrets file", "skipped", format!("{} does not exist", file.display())));
    }
    let issues = checks.iter().filter(|c| c.status == "failed").count();
    Ok(GpgDoctor { checks, issues })
}
