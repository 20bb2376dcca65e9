//! How one clap argument looks to MCP: the spec the derive generates per field.
//!
//! Generated code lists a leaf's arguments once, into an [`ArgList`] (one [`ArgList::push`]
//! per clap argument, flattened structs adding theirs in place). The catalog builds that list
//! once per leaf when [`crate::McpTool::catalog`] runs: the input schema is made from it, and
//! the leaf keeps its [`Arg`]s, which [`crate::CliTool::argv`] walks on every call.
//!
//! The derive reads the *shape* of a field syntactically, as clap_derive does (`bool`,
//! `Option<T>`, `Vec<T>`, `ArgAction::Count`), and leaves the *scalar* type to the compiler
//! through [`Probe`], the same autoref dispatch that clap's `value_parser!` uses, so that
//! `u16`, a type alias of `u16`, a `ValueEnum` and any `FromStr` type each get the schema
//! clap will parse them with.

use std::marker::PhantomData;

/// One clap argument of a leaf command. Built by generated code; read by the schema builder
/// ([`crate::schema::ObjectSchema::arg`]) and the argv rebuild ([`crate::argv::ArgReader::arg`]).
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct Arg {
    /// The clap argument id: the field name, or `#[arg(id = "..")]`. Also the property name.
    pub id: &'static str,
    /// `--long` name without dashes; `None` with `short` set means a short-only flag.
    pub long: Option<&'static str>,
    /// `-s` name.
    pub short: Option<char>,
    /// A positional argument (no `long`/`short`).
    pub positional: bool,
    /// How many values and how a boolean is spelled.
    pub shape: Shape,
    /// The type of each value.
    pub scalar: Scalar,
    /// Missing it is an error (clap: not `Option`, no default, or `required = true`).
    pub required: bool,
    /// `index = N` of a positional (1-based): clap orders positionals by it, so the argv
    /// rebuild does too (every positional of a leaf gives one, or none does).
    pub index: Option<usize>,
    /// `value_delimiter = ','`: a value containing it would be split by clap.
    pub delimiter: Option<char>,
    /// `value_name = ".."`: how clap's messages spell a positional (`<FILE>`); `None` for
    /// clap's default, the id in capitals.
    pub value_name: Option<&'static str>,
    /// A positional whose default the argv rebuild may write out when the call leaves it out
    /// but gives a later positional (else clap would read the later value in its place): the
    /// derive sets it when the default is a constant it can see and writing it out changes
    /// nothing for clap (no `env`, no `conflicts_with`, `requires`, `group`, ..).
    pub send_default: bool,
    /// The default texts the rebuild writes out ([`Arg::send_default`]); [`ArgList::push`]
    /// fills them in from the spec's defaults.
    pub default_texts: Vec<String>,
}

impl Arg {
    /// What generated code leaves out of an [`Arg`] literal: no `long` or `short` name, not
    /// positional, not required, no index, no delimiter, no default to write out. (The `id`, `shape` and `scalar` here are
    /// placeholders; generated code always gives its own.)
    pub const BASE: Arg = Arg {
        id: "",
        long: None,
        short: None,
        positional: false,
        shape: Shape::Single,
        scalar: Scalar::String,
        required: false,
        index: None,
        delimiter: None,
        value_name: None,
        send_default: false,
        default_texts: Vec::new(),
    };
}

/// The human side of an argument: its help text and where clap also reads it from.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Help {
    /// First paragraph of the doc comment, or `help = ".."`.
    pub help: Option<&'static str>,
    /// The whole doc comment when it has several paragraphs, or `long_help = ".."`.
    pub long_help: Option<&'static str>,
    /// `env = "VAR"`.
    pub env: Option<&'static str>,
}

impl Help {
    /// No help text and no environment variable.
    pub const NONE: Help = Help { help: None, long_help: None, env: None };
}

/// Everything the derive knows about one argument: the [`Arg`] the argv rebuild reads, plus
/// what only the schema shows (help, defaults, possible values).
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct ArgSpec {
    /// How the argument is spelled and typed.
    pub arg: Arg,
    /// Its help text.
    pub help: Help,
    /// clap's default value texts (`default_value`, `default_values`, or the `Display` of
    /// `default_value_t`), in order.
    pub defaults: Vec<String>,
    /// The allowed values (a `ValueEnum`, or `value_parser = [..]`), in clap's spelling.
    pub possible: Option<Vec<String>>,
}

/// The arguments of one leaf in declaration order, filled in by the generated
/// `McpArgs::mcp_args` (flattened structs add theirs in place).
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct ArgList(Vec<ArgSpec>, Vec<KeptOff>);

/// A positional kept off the tool (`#[mcp_tool(cli_only)]`, `hide = true`): never in a call's
/// argv, so no positional the tool takes may come after it in clap's order.
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct KeptOff {
    /// The clap argument id.
    pub id: &'static str,
    /// `index = N`, if given.
    pub index: Option<usize>,
    /// How many positionals the tool takes were listed before it (its place when no index
    /// is given).
    pub after: usize,
}

impl ArgList {
    /// Notes a positional kept off the tool, at its place in declaration order.
    pub fn kept_off(&mut self, id: &'static str, index: Option<usize>) {
        let after = self.0.iter().filter(|s| s.arg.positional).count();
        self.1.push(KeptOff { id, index, after });
    }

    /// The positionals kept off the tool.
    pub fn kept_off_positionals(&self) -> &[KeptOff] {
        &self.1
    }

    /// Appends one argument.
    pub fn push(&mut self, mut arg: Arg, help: Help, defaults: Vec<String>, possible: Option<Vec<String>>) {
        if arg.send_default {
            arg.default_texts.clone_from(&defaults);
        }
        self.0.push(ArgSpec { arg, help, defaults, possible });
    }

    /// The arguments, in declaration order.
    pub fn specs(&self) -> &[ArgSpec] {
        &self.0
    }

    /// The arguments, in declaration order.
    pub fn into_specs(self) -> Vec<ArgSpec> {
        self.0
    }
}

/// How many values an argument takes (clap_derive's `Ty` plus the `ArgAction`).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One value (`T` or `Option<T>`).
    Single,
    /// Any number of values (`Vec<T>`, `Option<Vec<T>>`, `ArgAction::Append`); `min` is
    /// 1 when the argument is required; a positional's literal `num_args` (`2`, `1..=3`)
    /// bounds both.
    Many {
        /// `minItems`.
        min: usize,
        /// `maxItems`, if any.
        max: Option<usize>,
    },
    /// A `bool` flag taking no value.
    Flag(FlagAction),
    /// `ArgAction::Count`: the flag repeated `n` times, `0..=255` (clap stores a `u8`).
    Count,
}

/// The action of a `bool` flag that takes no value.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagAction {
    /// `ArgAction::SetTrue` (clap's default for `bool`): present means `true`, default `false`.
    SetTrue,
    /// `ArgAction::SetFalse`: present means `false`, default `true`.
    SetFalse,
}

/// The JSON type of one value.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    /// `boolean`, spelled `true`/`false` on the command line (`ArgAction::Set`).
    Bool,
    /// `integer` within `min..=max` (from the Rust width; 128-bit types are held to what
    /// JSON numbers carry, `i64::MIN..=u64::MAX`).
    Int {
        /// `minimum`.
        min: i128,
        /// `maximum`.
        max: i128,
    },
    /// `number`; an `f32` (`bits: 32`) is held to `±f32::MAX`, as a larger number would
    /// parse as infinity.
    Float {
        /// 32 or 64.
        bits: u8,
    },
    /// `string` of exactly one character.
    Char,
    /// `string` of at least one character: clap's `PathBuf` parser refuses an empty value.
    Path,
    /// `string`: `String`, a `ValueEnum`, or anything clap parses from text.
    String,
}

impl Scalar {
    /// An integer narrowed to `min..=max` (the literal bounds of `value_parser!(T).range(..)`,
    /// which clap enforces when parsing); other scalars as they are.
    pub const fn within(self, min: Option<i128>, max: Option<i128>) -> Scalar {
        match self {
            Scalar::Int { min: lo, max: hi } => Scalar::Int {
                min: match min {
                    Some(m) if m > lo => m,
                    _ => lo,
                },
                max: match max {
                    Some(m) if m < hi => m,
                    _ => hi,
                },
            },
            other => other,
        }
    }
}

/// Autoref-specialisation probe: `(&&&&&Probe::<T>::new()).scalar()` picks the most specific
/// impl among [`ProbeBool`], [`ProbeInt`], [`ProbeFloat`], [`ProbeChar`] and [`ProbeText`].
#[doc(hidden)]
#[derive(Debug)]
pub struct Probe<T: ?Sized>(PhantomData<T>);

impl<T: ?Sized> Probe<T> {
    /// A probe for `T`.
    pub const fn new() -> Self {
        Probe(PhantomData)
    }
}

impl<T: ?Sized> Default for Probe<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Integer types and their bounds.
#[doc(hidden)]
pub trait IntBounds {
    /// Smallest value, held to `i64::MIN`.
    const MIN: i128;
    /// Largest value, held to `u64::MAX`.
    const MAX: i128;
}

macro_rules! int_bounds {
    ($($t:ty),*) => {$(
        impl IntBounds for $t {
            const MIN: i128 = {
                let min = <$t>::MIN as i128;
                if min < i64::MIN as i128 { i64::MIN as i128 } else { min }
            };
            const MAX: i128 = {
                let max = <$t>::MAX as u128;
                if max > u64::MAX as u128 { u64::MAX as i128 } else { max as i128 }
            };
        }
    )*};
}
int_bounds!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

/// Floating-point types.
#[doc(hidden)]
pub trait FloatType {
    /// 32 or 64.
    const BITS: u8;
}
impl FloatType for f32 {
    const BITS: u8 = 32;
}
impl FloatType for f64 {
    const BITS: u8 = 64;
}

/// Highest priority: `bool` values (for `Option<bool>` and `ArgAction::Set`).
#[doc(hidden)]
pub trait ProbeBool {
    /// The scalar type.
    fn scalar(&self) -> Scalar;
}
impl ProbeBool for &&&&Probe<bool> {
    fn scalar(&self) -> Scalar {
        Scalar::Bool
    }
}

/// Integers.
#[doc(hidden)]
pub trait ProbeInt {
    /// The scalar type.
    fn scalar(&self) -> Scalar;
}
impl<T: IntBounds> ProbeInt for &&&Probe<T> {
    fn scalar(&self) -> Scalar {
        Scalar::Int { min: T::MIN, max: T::MAX }
    }
}

/// Floats.
#[doc(hidden)]
pub trait ProbeFloat {
    /// The scalar type.
    fn scalar(&self) -> Scalar;
}
impl<T: FloatType> ProbeFloat for &&Probe<T> {
    fn scalar(&self) -> Scalar {
        Scalar::Float { bits: T::BITS }
    }
}

/// `char` and `PathBuf`: text with a length rule.
#[doc(hidden)]
pub trait ProbeChar {
    /// The scalar type.
    fn scalar(&self) -> Scalar;
}
impl ProbeChar for &Probe<char> {
    fn scalar(&self) -> Scalar {
        Scalar::Char
    }
}
impl ProbeChar for &Probe<std::path::PathBuf> {
    fn scalar(&self) -> Scalar {
        Scalar::Path
    }
}

/// Everything else: text that clap parses (`FromStr`, `ValueEnum`, `From<OsString>`, ...).
#[doc(hidden)]
pub trait ProbeText {
    /// The scalar type.
    fn scalar(&self) -> Scalar;
}
impl<T: ?Sized> ProbeText for Probe<T> {
    fn scalar(&self) -> Scalar {
        Scalar::String
    }
}

/// Possible values of a `ValueEnum` (clap's spelling, hidden values left out), found the
/// same way: `(&&Probe::<T>::new()).possible_values()`.
#[doc(hidden)]
pub trait ProbeValueEnum {
    /// The possible values, or `None` when `T` is not a `ValueEnum`.
    fn possible_values(&self) -> Option<Vec<String>>;
}
impl<T: clap::ValueEnum> ProbeValueEnum for &Probe<T> {
    fn possible_values(&self) -> Option<Vec<String>> {
        Some(
            T::value_variants()
                .iter()
                .filter_map(T::to_possible_value)
                .filter(|v| !v.is_hide_set())
                .map(|v| v.get_name().to_owned())
                .collect(),
        )
    }
}

/// Fallback of [`ProbeValueEnum`]: not a `ValueEnum`.
#[doc(hidden)]
pub trait ProbeNotValueEnum {
    /// `None`.
    fn possible_values(&self) -> Option<Vec<String>>;
}
impl<T: ?Sized> ProbeNotValueEnum for Probe<T> {
    fn possible_values(&self) -> Option<Vec<String>> {
        None
    }
}

/// The possible values of an explicit `value_parser = ...` expression (e.g. `["a", "b"]` or a
/// `PossibleValuesParser`), as clap's `Arg::value_parser` would see them.
#[doc(hidden)]
pub fn parser_possible_values(
    parser: impl clap::builder::IntoResettable<clap::builder::ValueParser>,
) -> Option<Vec<String>> {
    let arg = clap::Arg::new("value").value_parser(parser);
    let values = arg.get_value_parser().possible_values()?;
    Some(values.filter(|v| !v.is_hide_set()).map(|v| v.get_name().to_owned()).collect())
}

/// clap's spelling of a `ValueEnum` value (for `default_value_t` on a `value_enum` field).
#[doc(hidden)]
pub fn value_enum_name<T: clap::ValueEnum>(value: &T) -> Option<String> {
    value.to_possible_value().map(|v| v.get_name().to_owned())
}

#[cfg(test)]
// The borrows are the point: autoref specialisation picks an impl by how many `&` it strips.
#[allow(clippy::needless_borrow)]
mod tests {
    use super::*;

    #[allow(unused_imports)]
    use super::{ProbeBool as _, ProbeChar as _, ProbeFloat as _, ProbeInt as _, ProbeText as _};

    #[derive(Clone, Copy, clap::ValueEnum)]
    enum Level {
        Low,
        HighValue,
        #[value(hide = true)]
        Secret,
    }

    type Port = u16;

    #[test]
    fn probes_pick_the_type_clap_parses() {
        assert_eq!((&&&&&Probe::<bool>::new()).scalar(), Scalar::Bool);
        assert_eq!((&&&&&Probe::<u8>::new()).scalar(), Scalar::Int { min: 0, max: 255 });
        assert_eq!((&&&&&Probe::<Port>::new()).scalar(), Scalar::Int { min: 0, max: 65535 });
        assert_eq!((&&&&&Probe::<u128>::new()).scalar(), Scalar::Int { min: 0, max: u64::MAX as i128 });
        assert_eq!(
            (&&&&&Probe::<i128>::new()).scalar(),
            Scalar::Int { min: i64::MIN as i128, max: u64::MAX as i128 }
        );
        assert_eq!((&&&&&Probe::<f32>::new()).scalar(), Scalar::Float { bits: 32 });
        assert_eq!((&&&&&Probe::<f64>::new()).scalar(), Scalar::Float { bits: 64 });
        assert_eq!((&&&&&Probe::<char>::new()).scalar(), Scalar::Char);
        assert_eq!((&&&&&Probe::<String>::new()).scalar(), Scalar::String);
        assert_eq!((&&&&&Probe::<std::path::PathBuf>::new()).scalar(), Scalar::Path);
        assert_eq!((&&&&&Probe::<Level>::new()).scalar(), Scalar::String);
    }

    #[test]
    fn ranges_narrow_integers_only() {
        let u16s = Scalar::Int { min: 0, max: 65535 };
        assert_eq!(u16s.within(Some(1), None), Scalar::Int { min: 1, max: 65535 });
        assert_eq!(u16s.within(Some(-5), Some(70000)), u16s);
        assert_eq!(u16s.within(None, Some(1023)), Scalar::Int { min: 0, max: 1023 });
        assert_eq!(Scalar::String.within(Some(1), Some(2)), Scalar::String);
    }

    #[test]
    fn value_enum_values_use_clap_spelling_without_hidden() {
        use super::{ProbeNotValueEnum as _, ProbeValueEnum as _};
        assert_eq!(
            (&&Probe::<Level>::new()).possible_values(),
            Some(vec!["low".to_owned(), "high-value".to_owned()])
        );
        assert_eq!((&&Probe::<String>::new()).possible_values(), None);
        assert_eq!(value_enum_name(&Level::HighValue).as_deref(), Some("high-value"));
        let _ = (Level::Low, Level::Secret);
    }

    #[test]
    fn parser_values_come_from_clap() {
        assert_eq!(parser_possible_values(["a", "b"]), Some(vec!["a".into(), "b".into()]));
        assert_eq!(parser_possible_values(clap::value_parser!(u16)), None);
    }
}
