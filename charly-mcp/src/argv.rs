//! Rebuilding an argv from JSON tool arguments.
//!
//! [`crate::CliTool::argv`] calls [`ArgReader::arg`] once per argument spec the leaf kept
//! from its generated `mcp_args` (see [`crate::arg`]), in declaration order, except that the
//! positionals are in clap's order: by `#[arg(index = N)]` where the leaf gives indexes (the
//! catalog sorts its specs so). The result is the command path, then the flags as
//! `--long=value` (so a value can never become another flag), `true` booleans as the bare
//! flag, `false` as the off form where the flag has one, arrays and counts as repeated flags,
//! then `--` and the positionals (array positionals expanded). clap then parses that argv,
//! so defaults, `value_parser`s and conflicts behave exactly as on the command line.

use serde_json::Value;

use crate::arg::{Arg, FlagAction, Scalar, Shape};
use crate::model::JsonObject;

/// JSON arguments that cannot be turned into an argv for a tool. Its `Display` names the
/// tool, the key, what was wrong and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArgError {
    /// A key that is not one of the tool's arguments.
    #[error("tool `{tool}`: unknown argument `{}` (allowed: {allowed})", crate::quote::Quoted::new(key))]
    Unknown {
        /// Tool name.
        tool: String,
        /// The offending key.
        key: String,
        /// The tool's argument names, comma separated, or `none`.
        allowed: String,
    },
    /// A value of the wrong JSON type, out of range, or otherwise not allowed.
    #[error("tool `{tool}`: argument `{key}`: {problem}")]
    Invalid {
        /// Tool name.
        tool: String,
        /// The offending key.
        key: String,
        /// What was wrong and what is allowed.
        problem: String,
    },
    /// A required argument that is absent.
    #[error("tool `{tool}`: missing required argument `{key}` ({expected})")]
    Missing {
        /// Tool name.
        tool: String,
        /// The missing key.
        key: String,
        /// What it takes.
        expected: String,
    },
}

/// Reads a tool's JSON arguments, checking each against its [`Arg`] spec and tracking which
/// keys were used so that [`ArgReader::finish`] can reject the rest.
#[derive(Debug)]
pub struct ArgReader<'a> {
    tool: &'a str,
    args: &'a JsonObject,
    known: Vec<&'static str>,
    /// The first optional positional left out whose default cannot be written out: a later
    /// positional cannot be given without it, or clap would read the later value in its place.
    gap: Option<&'static str>,
    /// The defaults of positionals left out before `gap` ([`Arg::send_default`]): written out
    /// only when a later positional is given, to keep it in its place.
    held: Vec<String>,
}

/// The argv being built: flags, then positionals after `--`.
#[derive(Debug, Default)]
pub struct Argv {
    flags: Vec<String>,
    positionals: Vec<String>,
}

impl Argv {
    /// `path`, the flags, then `--` and the positionals when there are any.
    pub(crate) fn into_vec(self, path: &[&str]) -> Vec<String> {
        let mut argv = Vec::with_capacity(path.len() + self.flags.len() + self.positionals.len() + 1);
        argv.extend(path.iter().map(|s| (*s).to_owned()));
        argv.extend(self.flags);
        if !self.positionals.is_empty() {
            argv.push("--".to_owned());
            argv.extend(self.positionals);
        }
        argv
    }
}

impl<'a> ArgReader<'a> {
    /// A reader of `args` for the tool named `tool`.
    pub fn new(tool: &'a str, args: &'a JsonObject) -> Self {
        ArgReader { tool, args, known: Vec::new(), gap: None, held: Vec::new() }
    }

    /// Reads the argument described by `arg` and appends its argv to `argv`.
    ///
    /// # Errors
    ///
    /// [`ArgError::Invalid`] for a wrong JSON type, an out-of-range number, a `char` that is not
    /// one character, or a value holding the argument's `value_delimiter`;
    /// [`ArgError::Missing`] for an absent required argument.
    pub fn arg(&mut self, argv: &mut Argv, arg: &Arg) -> Result<(), ArgError> {
        self.known.push(arg.id);
        let Some(value) = self.args.get(arg.id) else {
            if arg.required {
                return Err(ArgError::Missing {
                    tool: self.tool.to_owned(),
                    key: arg.id.to_owned(),
                    expected: expected(arg),
                });
            }
            if arg.positional && self.gap.is_none() {
                if arg.send_default && !arg.default_texts.is_empty() {
                    self.held.extend(arg.default_texts.iter().cloned());
                } else {
                    self.gap = Some(arg.id);
                }
            }
            return Ok(());
        };
        if arg.positional {
            if let Some(gap) = self.gap {
                return Err(self.problem(
                    arg,
                    format!("positional arguments go in order: give `{gap}` too, or leave `{}` out", arg.id),
                ));
            }
            argv.positionals.append(&mut self.held);
        }
        match arg.shape {
            Shape::Flag(action) => {
                let on = value.as_bool().ok_or_else(|| self.invalid(arg, value))?;
                // The flag is written only when it changes the default.
                if on == (action == FlagAction::SetTrue) {
                    argv.flags.push(flag_name(arg));
                }
            }
            Shape::Count => {
                let n = self.integer(arg, value, 0, u8::MAX.into())?;
                for _ in 0..n {
                    argv.flags.push(flag_name(arg));
                }
            }
            Shape::Single => {
                let text = self.scalar(arg, value)?;
                push_value(argv, arg, text);
            }
            Shape::Many { min, max } => {
                let items = value.as_array().ok_or_else(|| self.invalid(arg, value))?;
                let n = items.len();
                if n < min {
                    return Err(self.problem(arg, format!("expected at least {min} item(s), got {n}")));
                }
                if let Some(max) = max.filter(|max| n > *max) {
                    return Err(self.problem(arg, format!("expected at most {max} item(s), got {n}")));
                }
                for item in items {
                    let text = self.scalar(arg, item)?;
                    push_value(argv, arg, text);
                }
            }
        }
        Ok(())
    }

    /// Rejects any key that no [`ArgReader::arg`] call asked for.
    ///
    /// # Errors
    ///
    /// [`ArgError::Unknown`] naming the first unknown key and listing the allowed ones.
    pub fn finish(self) -> Result<(), ArgError> {
        match self.args.keys().find(|k| !self.known.contains(&k.as_str())) {
            None => Ok(()),
            Some(key) => {
                let mut allowed = self.known.clone();
                allowed.sort_unstable();
                Err(ArgError::Unknown {
                    tool: self.tool.to_owned(),
                    key: key.clone(),
                    allowed: if allowed.is_empty() { "none".to_owned() } else { allowed.join(", ") },
                })
            }
        }
    }

    /// The command-line text of one value, checked against the argument's scalar type.
    fn scalar(&self, arg: &Arg, value: &Value) -> Result<String, ArgError> {
        let text = match arg.scalar {
            Scalar::Bool => value.as_bool().ok_or_else(|| self.invalid(arg, value))?.to_string(),
            Scalar::Int { min, max } => self.integer(arg, value, min, max)?.to_string(),
            Scalar::Float { bits } => match value {
                Value::Number(n) => {
                    let f = n.as_f64().ok_or_else(|| self.invalid(arg, value))?;
                    if bits == 32 && f.abs() > f64::from(f32::MAX) {
                        return Err(self
                            .problem(arg, format!("{n} is out of range (allowed: {})", float_range(bits))));
                    }
                    f.to_string()
                }
                _ => return Err(self.invalid(arg, value)),
            },
            Scalar::Char => {
                let s = value.as_str().ok_or_else(|| self.invalid(arg, value))?;
                if s.chars().count() != 1 {
                    let n = s.chars().count();
                    return Err(self.problem(arg, format!("expected exactly one character, got {n}")));
                }
                s.to_owned()
            }
            Scalar::Path => {
                let s = value.as_str().ok_or_else(|| self.invalid(arg, value))?;
                if s.is_empty() {
                    return Err(
                        self.problem(arg, "expected a non-empty path, got an empty string".to_owned())
                    );
                }
                s.to_owned()
            }
            Scalar::String => value.as_str().ok_or_else(|| self.invalid(arg, value))?.to_owned(),
        };
        if let Some(d) = arg.delimiter.filter(|d| text.contains(*d)) {
            return Err(self.problem(
                arg,
                format!(
                    "a value contains `{d}`, which separates values of this argument; pass an array instead"
                ),
            ));
        }
        Ok(text)
    }

    /// An integer in `min..=max`; a JSON number with a zero fraction (`3.0`) counts, as in
    /// JSON Schema's `integer`.
    fn integer(&self, arg: &Arg, value: &Value, min: i128, max: i128) -> Result<i128, ArgError> {
        let Value::Number(n) = value else {
            return Err(self.invalid(arg, value));
        };
        let int = if let Some(i) = n.as_i64() {
            Some(i128::from(i))
        } else if let Some(u) = n.as_u64() {
            Some(i128::from(u))
        } else {
            n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 2f64.powi(64)).map(|f| f as i128)
        };
        match int {
            Some(i) if (min..=max).contains(&i) => Ok(i),
            Some(_) => Err(self.problem(arg, format!("{n} is out of range (allowed: {min} to {max})"))),
            None => Err(self.invalid(arg, value)),
        }
    }

    fn invalid(&self, arg: &Arg, value: &Value) -> ArgError {
        self.problem(arg, format!("expected {}, got {}", expected(arg), json_type(value)))
    }

    fn problem(&self, arg: &Arg, problem: String) -> ArgError {
        ArgError::Invalid { tool: self.tool.to_owned(), key: arg.id.to_owned(), problem }
    }
}

fn push_value(argv: &mut Argv, arg: &Arg, text: String) {
    if arg.positional {
        argv.positionals.push(text);
    } else {
        argv.flags.push(format!("{}={text}", flag_name(arg)));
    }
}

/// `--long`, or `-s` for a short-only flag.
fn flag_name(arg: &Arg) -> String {
    match (arg.long, arg.short) {
        (Some(long), _) => format!("--{long}"),
        (None, Some(short)) => format!("-{short}"),
        (None, None) => format!("--{}", arg.id),
    }
}

/// What an argument takes, in words: `an integer from 0 to 255`, `an array of strings`.
fn expected(arg: &Arg) -> String {
    // (one, many): `a string`, `strings`.
    let (one, many) = match arg.scalar {
        Scalar::Bool => ("a boolean".to_owned(), "booleans".to_owned()),
        Scalar::Int { min, max } => {
            (format!("an integer from {min} to {max}"), format!("integers from {min} to {max}"))
        }
        Scalar::Float { bits: 32 } => {
            (format!("a number from {}", float_range(32)), format!("numbers from {}", float_range(32)))
        }
        Scalar::Float { .. } => ("a number".to_owned(), "numbers".to_owned()),
        Scalar::Char => ("a one-character string".to_owned(), "one-character strings".to_owned()),
        Scalar::Path => ("a non-empty string (a path)".to_owned(), "non-empty strings (paths)".to_owned()),
        Scalar::String => ("a string".to_owned(), "strings".to_owned()),
    };
    match arg.shape {
        Shape::Flag(_) => "a boolean".to_owned(),
        Shape::Count => "an integer from 0 to 255".to_owned(),
        Shape::Single => one,
        Shape::Many { .. } => format!("an array of {many}"),
    }
}

/// The range of an `f32`, in words.
fn float_range(bits: u8) -> String {
    match bits {
        32 => format!("{:e} to {:e}", -f32::MAX, f32::MAX),
        _ => "any number".to_owned(),
    }
}

/// The JSON type of a value, for "expected X, got Y": never the value itself, which may be
/// a secret sent with the wrong type (a PIN as a number).
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn arg(id: &'static str, shape: Shape, scalar: Scalar) -> Arg {
        Arg {
            id,
            long: Some(id),
            short: None,
            positional: false,
            shape,
            scalar,
            required: false,
            index: None,
            delimiter: None,
            value_name: None,
            send_default: false,
            default_texts: Vec::new(),
        }
    }

    fn run(args: Value, specs: &[Arg]) -> Result<Vec<String>, ArgError> {
        let args = args.as_object().unwrap().clone();
        let mut reader = ArgReader::new("t", &args);
        let mut argv = Argv::default();
        for spec in specs {
            reader.arg(&mut argv, spec)?;
        }
        reader.finish()?;
        Ok(argv.into_vec(&["a", "b"]))
    }

    #[test]
    fn flags_then_positionals_after_double_dash() {
        let mut name = arg("name", Shape::Single, Scalar::String);
        name.positional = true;
        let mut files = arg("files", Shape::Many { min: 0, max: None }, Scalar::String);
        files.positional = true;
        let specs = [
            name,
            arg("port", Shape::Single, Scalar::Int { min: 0, max: 65535 }),
            arg("tag", Shape::Many { min: 0, max: None }, Scalar::String),
            arg("v", Shape::Count, Scalar::Int { min: 0, max: 255 }),
            arg("force", Shape::Flag(FlagAction::SetTrue), Scalar::Bool),
            arg("color", Shape::Flag(FlagAction::SetFalse), Scalar::Bool),
            arg("refresh", Shape::Single, Scalar::Bool),
            files,
        ];
        let argv = run(
            json!({"name":"-x","port":8080,"tag":["a","--b"],"v":2,"force":true,"color":false,
                   "refresh":false,"files":["--","c d"]}),
            &specs,
        )
        .unwrap();
        assert_eq!(
            argv,
            [
                "a",
                "b",
                "--port=8080",
                "--tag=a",
                "--tag=--b",
                "--v",
                "--v",
                "--force",
                "--color",
                "--refresh=false",
                "--",
                "-x",
                "--",
                "c d"
            ]
        );
        // Defaults are not written.
        let argv = run(json!({"name":"n","force":false,"color":true}), &specs).unwrap();
        assert_eq!(argv, ["a", "b", "--", "n"]);
    }

    #[test]
    fn errors_name_tool_key_and_what_is_allowed() {
        let port = arg("port", Shape::Single, Scalar::Int { min: 0, max: 65535 });
        let e = run(json!({"port": 70000}), std::slice::from_ref(&port)).unwrap_err();
        assert_eq!(e.to_string(), "tool `t`: argument `port`: 70000 is out of range (allowed: 0 to 65535)");
        let e = run(json!({"port": "80"}), std::slice::from_ref(&port)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tool `t`: argument `port`: expected an integer from 0 to 65535, got a string"
        );
        let e = run(json!({"port": 1.5}), std::slice::from_ref(&port)).unwrap_err();
        assert!(e.to_string().contains("got a number") && !e.to_string().contains("1.5"), "{e}");
        // A value of the wrong type is never echoed: it may be a secret (a PIN as a number).
        let secret = arg("value", Shape::Single, Scalar::String);
        for value in [json!(987654321), json!(true), json!(["pin-1234"]), json!({"pin": "pin-1234"})] {
            let e = run(json!({"value": value}), std::slice::from_ref(&secret)).unwrap_err().to_string();
            assert!(e.starts_with("tool `t`: argument `value`: expected a string, got "), "{e}");
            assert!(!e.contains("987654321") && !e.contains("pin-1234") && !e.contains("true"), "{e}");
        }
        assert_eq!(run(json!({"port": 80.0}), std::slice::from_ref(&port)).unwrap(), ["a", "b", "--port=80"]);
        let e = run(json!({"prot": 1}), std::slice::from_ref(&port)).unwrap_err();
        assert_eq!(e.to_string(), "tool `t`: unknown argument `prot` (allowed: port)");
        let mut req = arg("name", Shape::Single, Scalar::String);
        req.required = true;
        let e = run(json!({}), &[req]).unwrap_err();
        assert_eq!(e.to_string(), "tool `t`: missing required argument `name` (a string)");
        let e = run(json!({"x": 1}), &[]).unwrap_err();
        assert_eq!(e.to_string(), "tool `t`: unknown argument `x` (allowed: none)");
    }

    #[test]
    fn positionals_cannot_skip_ahead() {
        let mut first = arg("first", Shape::Single, Scalar::String);
        first.positional = true;
        let mut second = arg("second", Shape::Many { min: 0, max: None }, Scalar::String);
        second.positional = true;
        let specs = [first, second];
        let e = run(json!({"second": ["x"]}), &specs).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tool `t`: argument `second`: positional arguments go in order: give `first` too, or leave `second` out"
        );
        assert_eq!(run(json!({"first": "a", "second": ["x"]}), &specs).unwrap(), ["a", "b", "--", "a", "x"]);
    }

    #[test]
    fn a_left_out_default_is_written_only_to_keep_a_later_positional_in_place() {
        let pos = |id, fill: &[&str]| Arg {
            positional: true,
            send_default: !fill.is_empty(),
            default_texts: fill.iter().map(|s| (*s).to_owned()).collect(),
            ..arg(id, Shape::Single, Scalar::String)
        };
        let specs = [pos("mode", &["fast"]), pos("level", &["3"]), pos("target", &[])];
        assert_eq!(run(json!({"target": "t"}), &specs).unwrap(), ["a", "b", "--", "fast", "3", "t"]);
        assert_eq!(run(json!({"level": "9"}), &specs).unwrap(), ["a", "b", "--", "fast", "9"]);
        assert_eq!(run(json!({"mode": "m"}), &specs).unwrap(), ["a", "b", "--", "m"]);
        assert_eq!(run(json!({}), &specs).unwrap(), ["a", "b"]);
        // A default that cannot be written out (env, a computed value) still refuses the call.
        let specs = [pos("mode", &["fast"]), pos("level", &[]), pos("target", &[])];
        let e = run(json!({"target": "t"}), &specs).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tool `t`: argument `target`: positional arguments go in order: give `level` too, or leave `target` out"
        );
    }

    #[test]
    fn delimiter_and_char_and_min_items() {
        let mut list = arg("list", Shape::Many { min: 1, max: None }, Scalar::String);
        list.delimiter = Some(',');
        assert!(
            run(json!({"list": ["a,b"]}), std::slice::from_ref(&list))
                .unwrap_err()
                .to_string()
                .contains("`,`")
        );
        assert!(
            run(json!({"list": []}), std::slice::from_ref(&list))
                .unwrap_err()
                .to_string()
                .contains("at least 1")
        );
        let c = arg("c", Shape::Single, Scalar::Char);
        assert_eq!(run(json!({"c": "é"}), std::slice::from_ref(&c)).unwrap(), ["a", "b", "--c=é"]);
        assert!(run(json!({"c": "ab"}), std::slice::from_ref(&c)).is_err());
        let path = arg("p", Shape::Single, Scalar::Path);
        assert_eq!(
            run(json!({"p": ""}), std::slice::from_ref(&path)).unwrap_err().to_string(),
            "tool `t`: argument `p`: expected a non-empty path, got an empty string"
        );
        let short =
            Arg { long: None, short: Some('n'), ..arg("n", Shape::Single, Scalar::Float { bits: 32 }) };
        assert_eq!(run(json!({"n": -0.5}), std::slice::from_ref(&short)).unwrap(), ["a", "b", "-n=-0.5"]);
        let e = run(json!({"n": -1e39}), &[short]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tool `t`: argument `n`: -1e+39 is out of range (allowed: -3.4028235e38 to 3.4028235e38)"
        );
    }
}
