//! `file:` — files a candy ships into its boxes' images: a file (or directory) of the candy's
//! directory, copied by the generated Containerfile from the build context (the project root)
//! to an absolute path in the image, with a mode when one is given.
//!
//! ```yaml
//! # candy/charly-overlay/charly.yml
//! charly-overlay-bin:
//!   file: [{source: charly-overlay, dest: /usr/local/bin/charly-overlay, mode: "0755"}]
//! ```
//!
//! becomes `COPY --chmod=0755 candy/charly-overlay/charly-overlay /usr/local/bin/charly-overlay`
//! after the packages are installed. Packages come from a distribution; this is how a candy
//! brings a file of its own (a program built elsewhere, a configuration file).
//!
//! Both paths are words a Containerfile's `COPY` takes as they are: letters, digits and
//! `. _ - + @ /`, no `..` (no spaces, quotes or `$`, which `COPY` would split or expand). The
//! source must exist beneath the candy's directory (a symlink leading out of the project is
//! refused); the mode is three or four octal digits, written as a string (`"0755"`): an
//! unquoted `0755` is the number 755 in YAML 1.2 and 493 in YAML 1.1.

use std::path::Path;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::beneath::{Beneath, Missing};

/// One `file:` entry of a candy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CandyFile {
    /// The path in the candy's directory.
    pub source: String,
    /// The absolute path in the image.
    pub dest: String,
    /// Octal permission bits (`0755`); absent: the source's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The candy that ships it.
    pub candy: String,
}

impl CandyFile {
    /// The source relative to the project root (the build context): `candy/<candy>/<source>`.
    pub fn context_path(&self) -> String {
        format!("candy/{}/{}", self.candy, self.source)
    }

    /// The Containerfile line that copies it.
    pub fn copy_line(&self) -> String {
        let chmod = self.mode.as_ref().map(|m| format!("--chmod={m} ")).unwrap_or_default();
        format!("COPY {chmod}{} {}", self.context_path(), self.dest)
    }
}

/// Reads a `file:` node's value for candy `candy`; each problem (worded with the key path,
/// `file[0].dest`, and what is allowed) is pushed onto `problems`.
pub fn parse(spec: &Value, candy: &str, problems: &mut Vec<String>) -> Vec<CandyFile> {
    const SHAPE: &str = "{source, dest, mode}";
    let Value::Array(items) = spec else {
        problems.push(format!("`file:` must be a list of {SHAPE}, not {spec}"));
        return Vec::new();
    };
    let mut files = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("file[{i}]");
        let Some(map) = item.as_object() else {
            problems.push(format!("`{at}` is {item}; each entry is a map {SHAPE}"));
            continue;
        };
        let unknown: Vec<&String> =
            map.keys().filter(|k| !["source", "dest", "mode"].contains(&k.as_str())).collect();
        for key in &unknown {
            problems.push(format!("unknown key `{at}.{key}`; allowed: source, dest, mode"));
        }
        if !unknown.is_empty() {
            continue;
        }
        let mut path = |key: &str, rule: fn(&str) -> Result<(), String>, missing: &str| match map.get(key) {
            None => {
                problems.push(format!("`{at}.{key}` is missing; {missing}"));
                None
            }
            Some(Value::String(s)) => match rule(s) {
                Ok(()) => Some(s.clone()),
                Err(allowed) => {
                    problems.push(format!("`{at}.{key}` is {s:?}; it must be {allowed}"));
                    None
                }
            },
            Some(other) => {
                problems.push(format!("`{at}.{key}` is {other}; it must be a string"));
                None
            }
        };
        let source = path("source", source_rule, "give a file or directory of the candy's directory");
        let dest = path("dest", dest_rule, "give the absolute path in the image");
        let mode = match map.get("mode") {
            None | Some(Value::Null) => Some(None),
            Some(Value::String(m)) if mode_rule(m) => Some(Some(m.clone())),
            Some(other) => {
                problems.push(format!(
                    "`{at}.mode` is {other}; it must be three or four octal digits in quotes, such as \"0755\""
                ));
                None
            }
        };
        if let (Some(source), Some(dest), Some(mode)) = (source, dest, mode) {
            files.push(CandyFile { source, dest, mode, candy: candy.to_owned() });
        }
    }
    files
}

/// The sources of `files` that are not a file or directory beneath the project root
/// (`candy/<candy>/<source>`), worded as problems.
pub(crate) fn missing_sources(beneath: &Beneath, files: &[CandyFile]) -> Vec<String> {
    files
        .iter()
        .filter(|f| !beneath.locate(Path::new(&f.context_path()), Missing::Fail).is_ok_and(|e| e.kind.is_some()))
        .map(|f| {
            format!(
                "`file` source {:?} (for {}) is not in the candy's directory ({}); put the file there, or name one that is",
                f.source,
                f.dest,
                f.context_path()
            )
        })
        .collect()
}

/// Characters `COPY` takes as they are.
fn plain(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "._-+@/".contains(c))
}

fn source_rule(s: &str) -> Result<(), String> {
    if plain(s) && !s.starts_with('/') && !s.split('/').any(|c| c == "..") {
        Ok(())
    } else {
        Err("a path inside the candy's directory: letters, digits and `. _ - + @ /`, no leading `/`, no `..`"
            .into())
    }
}

fn dest_rule(s: &str) -> Result<(), String> {
    if plain(s) && s.starts_with('/') && s != "/" && !s.split('/').any(|c| c == "..") {
        Ok(())
    } else {
        Err("an absolute path in the image: `/` then letters, digits and `. _ - + @ /`, no `..`".into())
    }
}

fn mode_rule(m: &str) -> bool {
    (3..=4).contains(&m.len()) && m.chars().all(|c| ('0'..='7').contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parsed(spec: Value) -> (Vec<CandyFile>, Vec<String>) {
        let mut problems = Vec::new();
        (parse(&spec, "tools", &mut problems), problems)
    }

    #[test]
    fn an_entry_becomes_a_copy_from_the_candys_directory() {
        let (files, problems) =
            parsed(json!([{"source": "bin/tool", "dest": "/usr/local/bin/tool", "mode": "0755"}]));
        assert_eq!(problems, Vec::<String>::new());
        assert_eq!(files[0].copy_line(), "COPY --chmod=0755 candy/tools/bin/tool /usr/local/bin/tool");
        let (files, _) = parsed(json!([{"source": "tool.conf", "dest": "/etc/tool.conf"}]));
        assert_eq!(files[0].copy_line(), "COPY candy/tools/tool.conf /etc/tool.conf");
    }

    #[test]
    fn each_bad_entry_names_its_key_path_and_what_is_allowed() {
        let (files, problems) = parsed(json!([
            {"source": "../secret", "dest": "/x"},
            {"source": "a b", "dest": "relative/x"},
            {"source": "ok", "dest": "/$HOME/x", "mode": 755},
            {"source": "ok", "dest": "/x", "mode": "0855"},
            {"source": "ok"},
            {"src": "ok", "dest": "/x"},
            "just a string",
        ]));
        assert!(files.is_empty(), "{files:?}");
        let want = [
            "`file[0].source` is \"../secret\"; it must be a path inside the candy's directory",
            "`file[1].source` is \"a b\"",
            "`file[1].dest` is \"relative/x\"; it must be an absolute path in the image",
            "`file[2].dest` is \"/$HOME/x\"",
            "`file[2].mode` is 755; it must be three or four octal digits in quotes, such as \"0755\"",
            "`file[3].mode` is \"0855\"",
            "`file[4].dest` is missing; give the absolute path in the image",
            "unknown key `file[5].src`; allowed: source, dest, mode",
            "`file[6]` is \"just a string\"; each entry is a map {source, dest, mode}",
        ];
        assert_eq!(problems.len(), want.len(), "{problems:#?}");
        for (got, want) in problems.iter().zip(want) {
            assert!(got.starts_with(want), "{got}\n  does not start with\n{want}");
        }
        assert_eq!(
            parsed(json!({"source": "x"})).1,
            ["`file:` must be a list of {source, dest, mode}, not {\"source\":\"x\"}"]
        );
    }
}
