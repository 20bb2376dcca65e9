//! The reports of `secrets.gpg.*`.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

use crate::report::Report;

/// `secrets gpg show`: the plaintext, read on purpose.
#[derive(Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GpgPlaintext {
    /// The encrypted file.
    pub file: String,
    /// Its decrypted text.
    pub plaintext: String,
}

impl fmt::Debug for GpgPlaintext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpgPlaintext").field("file", &self.file).finish_non_exhaustive()
    }
}

impl fmt::Display for GpgPlaintext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.plaintext)
    }
}

impl Report for GpgPlaintext {}

/// One variable of `secrets gpg env`.
#[derive(Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GpgVar {
    /// The name.
    pub key: String,
    /// The value.
    pub value: String,
}

impl fmt::Debug for GpgVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpgVar").field("key", &self.key).finish_non_exhaustive()
    }
}

/// `secrets gpg env`: the variables, read on purpose.
#[derive(Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GpgEnv {
    /// The encrypted file.
    pub file: String,
    /// Whether it exists (a missing file gives no variables and no error).
    pub exists: bool,
    /// The variables, in file order.
    pub vars: Vec<GpgVar>,
}

impl fmt::Debug for GpgEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpgEnv").field("file", &self.file).finish_non_exhaustive()
    }
}

impl fmt::Display for GpgEnv {
    /// `export KEY='value'` per variable.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.vars.iter().try_for_each(|v| writeln!(f, "{}", super::dotenv::export_line(&v.key, &v.value)))
    }
}

impl Report for GpgEnv {}

/// `secrets gpg decrypt`.
#[derive(Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GpgDecrypted {
    /// The encrypted file.
    pub input: String,
    /// The plaintext file written (mode 0600); absent when printed on a terminal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// The plaintext, when no output file was given (a terminal only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plaintext: Option<String>,
}

impl fmt::Debug for GpgDecrypted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpgDecrypted")
            .field("input", &self.input)
            .field("output", &self.output)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for GpgDecrypted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.plaintext, &self.output) {
            (Some(text), _) => f.write_str(text),
            (None, Some(out)) => writeln!(f, "Decrypted {} to {out}", self.input),
            (None, None) => Ok(()),
        }
    }
}

impl Report for GpgDecrypted {}

/// `secrets gpg encrypt|edit|set|unset|add-recipient`: the file rewritten (or not).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GpgChanged {
    /// The encrypted file.
    pub file: String,
    /// What happened: `encrypted`, `set KEY`, `unset KEY`, `added recipient X`, `edited`, or
    /// a no-change note (`KEY was not set`, `X is already a recipient`, `no changes made`).
    pub action: String,
    /// Whether the file was rewritten.
    pub changed: bool,
    /// The recipients it is encrypted to now.
    pub recipients: Vec<String>,
}

impl fmt::Display for GpgChanged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.changed {
            writeln!(f, "{}: {} (recipients: {})", self.file, self.action, self.recipients.join(", "))
        } else {
            writeln!(f, "{}: {}", self.file, self.action)
        }
    }
}

impl Report for GpgChanged {}

/// `secrets gpg recipients`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GpgRecipients {
    /// The encrypted file.
    pub file: String,
    /// The key ids it is encrypted to.
    pub recipients: Vec<String>,
}

impl fmt::Display for GpgRecipients {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.recipients.iter().try_for_each(|r| writeln!(f, "{r}"))
    }
}

impl Report for GpgRecipients {}

/// `secrets gpg import-key`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GpgImported {
    /// Where the keys came from (files, or `Secret Service`).
    pub sources: Vec<String>,
    /// Fingerprints gpg reported as imported (or unchanged).
    pub keys: Vec<String>,
    /// Whether an ownertrust file was imported.
    pub ownertrust: bool,
}

impl fmt::Display for GpgImported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.keys.is_empty() {
            return writeln!(f, "No keys imported.");
        }
        writeln!(f, "Imported keys:")?;
        self.keys.iter().try_for_each(|k| writeln!(f, "  {k}"))?;
        if self.ownertrust {
            writeln!(f, "Imported ownertrust")?;
        }
        Ok(())
    }
}

impl Report for GpgImported {}

/// `secrets gpg export-key`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GpgExported {
    /// The key's fingerprint.
    pub key: String,
    /// The key's user id.
    pub uid: String,
    /// The files written, or the Secret Service items stored (labels).
    pub written: Vec<String>,
}

impl fmt::Display for GpgExported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.written.iter().try_for_each(|w| writeln!(f, "Exported {} to {w}", self.key))
    }
}

impl Report for GpgExported {}

/// One step of `setup`, or one check of `doctor`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GpgStep {
    /// What was done or checked.
    pub name: String,
    /// `ok`, `warning`, `skipped` or `failed`.
    pub status: String,
    /// Details and fixes (no secrets).
    pub detail: String,
}

impl GpgStep {
    /// A step.
    pub fn new(name: &str, status: &str, detail: impl Into<String>) -> GpgStep {
        GpgStep { name: name.into(), status: status.into(), detail: detail.into() }
    }
}

fn steps(f: &mut fmt::Formatter<'_>, steps: &[GpgStep]) -> fmt::Result {
    for s in steps {
        let mark = match s.status.as_str() {
            "ok" => "✓",
            "warning" => "!",
            "skipped" => "-",
            _ => "✗",
        };
        writeln!(f, "{mark} {}: {}", s.name, s.detail)?;
    }
    Ok(())
}

/// `secrets gpg setup`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GpgSetup {
    /// The steps, in order.
    pub steps: Vec<GpgStep>,
    /// The key set up (fingerprint), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

impl fmt::Display for GpgSetup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        steps(f, &self.steps)
    }
}

impl Report for GpgSetup {
    fn failure(&self) -> Option<String> {
        let failed = self.steps.iter().filter(|s| s.status == "failed").count();
        (failed > 0).then(|| format!("{failed} setup step(s) failed"))
    }
}

/// `secrets gpg doctor`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GpgDoctor {
    /// The checks.
    pub checks: Vec<GpgStep>,
    /// How many failed.
    pub issues: usize,
}

impl fmt::Display for GpgDoctor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        steps(f, &self.checks)?;
        if self.issues == 0 {
            writeln!(f, "All checks passed.")
        } else {
            writeln!(f, "{} issue(s) found", self.issues)
        }
    }
}

impl Report for GpgDoctor {
    fn failure(&self) -> Option<String> {
        (self.issues > 0).then(|| format!("{} issue(s) found", self.issues))
    }
}
