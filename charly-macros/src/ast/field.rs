//! Fields of a leaf: each clap argument resolved by clap's rules (id, long/short, action,
//! required, defaults, possible values), or a flattened struct.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Expr, Ident, Type};

use super::{UnrawString, option_inner};
use crate::attr::{ClapAttrs, lit};
use crate::case::Casing;
use crate::ctxt::Ctxt;
use crate::doc::doc_text;
use crate::symbol::*;
use crate::ty::Ty;

mod rules;

use rules::{
    FlagDefault, action, check_absent_env, check_flag_env, check_indexes, check_not_last, check_num_args,
    flag_default, index_of, is_constant, is_value_parser_macro, num_args_of, range_of,
};

/// One field of a leaf. Built once per field at expansion time, so the size difference
/// between the variants costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Field<'a> {
    Arg(Arg),
    Flatten(&'a Type),
    /// A positional kept off the tool (`cli_only`, `hide = true`), by clap id and `index`:
    /// listed so that the catalog can refuse one placed, through a flatten, before a
    /// positional the tool takes.
    KeptOff(String, Option<usize>),
}

/// One clap argument, resolved.
pub(crate) struct Arg {
    pub(crate) span: Span,
    pub(crate) id: String,
    pub(crate) long: Option<String>,
    pub(crate) short: Option<char>,
    pub(crate) shape: Shape,
    /// The type of one value.
    pub(crate) value_ty: Type,
    pub(crate) scalar: Scalar,
    pub(crate) required: bool,
    /// `index = N` of a positional: where clap puts it among the positionals (1-based).
    pub(crate) index: Option<usize>,
    /// Whether `index` was given at all (a non-literal one is an error of its own).
    pub(crate) index_given: bool,
    pub(crate) delimiter: Option<char>,
    pub(crate) help: Option<TokenStream>,
    pub(crate) long_help: Option<TokenStream>,
    pub(crate) env: Option<String>,
    pub(crate) defaults: Defaults,
    pub(crate) possible: Possible,
    /// A positional whose default the argv rebuild may write out (the runtime's `send_default`).
    pub(crate) send_default: bool,
    /// `value_name = ".."` of a positional: how clap's messages spell it.
    pub(crate) value_name: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Single,
    /// `min`/`max` are the `minItems`/`maxItems` of the array.
    Many {
        min: usize,
        max: Option<usize>,
    },
    SetTrue,
    SetFalse,
    Count,
}

pub(crate) enum Scalar {
    /// Ask the compiler, as `value_parser!` does; `value_parser!(T).range(a..b)` narrows an
    /// integer to the inclusive bounds given.
    Probe { min: Option<i128>, max: Option<i128> },
    /// An explicit `value_parser = ..` parses text: `string`.
    Text,
}

pub(crate) enum Defaults {
    None,
    /// `default_value = ..`, `default_values = ..`: texts.
    Texts(Expr, bool),
    /// `default_value_t [= ..]`: a typed value shown with `Display` (or clap's `ValueEnum` name).
    Typed(Option<Expr>),
    /// `default_values_t = ..`.
    TypedMany(Expr),
}

pub(crate) enum Possible {
    /// `value_enum`: the `ValueEnum`'s values.
    ValueEnum,
    /// `value_parser = expr`: whatever values the parser lists.
    Parser(Expr),
    /// Neither: a `ValueEnum` found by the compiler, or nothing.
    Probe,
}

pub(super) fn fields<'a>(
    cx: &Ctxt,
    named: &'a syn::punctuated::Punctuated<syn::Field, syn::Token![,]>,
    casing: Casing,
    env_casing: Casing,
) -> Vec<Field<'a>> {
    let mut out = Vec::new();
    // Positionals in declaration order, as (name, clap's place, whether a call can give it):
    // one a call can never give must not come before one it can.
    let mut places: Vec<(&Ident, usize, bool)> = Vec::new();
    for f in named {
        let cli_only = crate::attr::field_attrs(cx, &f.attrs);
        let clap = ClapAttrs::from_ast(cx, &f.attrs);
        let ident = f.ident.as_ref().expect("named field");
        let positional = clap.get(LONG).is_none()
            && clap.get(SHORT).is_none()
            && !clap.flag(FLATTEN)
            && !clap.flag(SUBCOMMAND)
            && clap.get(SKIP).is_none();
        if positional {
            let place = clap
                .get(INDEX)
                .and_then(|a| a.value.as_ref())
                .and_then(rules::int_lit)
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(places.len() + 1);
            let given = cli_only.is_none() && !clap.flag(HIDE);
            places.push((ident, place, given));
            if !given {
                let scratch = Ctxt::new();
                let id = clap
                    .lit_str(&scratch, ID)
                    .flatten()
                    .map_or_else(|| ident.unraw_string(), |id| id.value());
                let _ = scratch.check();
                let index = clap
                    .get(INDEX)
                    .and_then(|a| a.value.as_ref())
                    .and_then(rules::int_lit)
                    .and_then(|n| usize::try_from(n).ok());
                out.push(Field::KeptOff(id, index));
            }
        }
        if cli_only.is_some() && !clap.flag(FLATTEN) {
            // A required argument a call can never give would fail every call. (Only that:
            // the rules for tool inputs do not apply to it.)
            if clap_requires(f, ident, &clap, casing, env_casing) {
                cx.error_spanned_by(
                    ident,
                    "a required argument cannot be `cli_only`: no tool call could give it; make it \
                     optional (`Option<T>`, a default) or leave it on the tool",
                );
            }
        }
        if cli_only.is_some() {
            continue;
        }
        if clap.flag(FLATTEN) {
            out.push(Field::Flatten(option_inner(&f.ty).unwrap_or(&f.ty)));
            continue;
        }
        if clap.get(SKIP).is_some() {
            continue;
        }
        if clap.flag(HIDE) {
            // Hidden arguments are not tool inputs; one that clap requires fails every call.
            if clap_requires(f, ident, &clap, casing, env_casing) {
                cx.error_spanned_by(
                    ident,
                    format!(
                        "`{ident}` is hidden (`hide = true`), so it is not a tool input, but clap \
                         requires it (no default, no `env`), so every tool call would fail; give it a \
                         default (`default_value`, `Option<T>`) or do not hide it"
                    ),
                );
            }
            continue;
        }
        if let Some(arg) = arg(cx, f, ident, &clap, casing, env_casing) {
            out.push(Field::Arg(arg));
        }
    }
    check_indexes(cx, &out);
    check_kept_off_positionals(cx, &places);
    out
}

/// A positional kept off the tool (`#[mcp_tool(cli_only)]`, `hide = true`) is never in a
/// call's argv, so clap would give its place to the next positional's value: the caller's
/// `second` would arrive as `first`. Such a positional must come after every positional a
/// call can give.
fn check_kept_off_positionals(cx: &Ctxt, places: &[(&Ident, usize, bool)]) {
    for (off, place, _) in places.iter().filter(|p| !p.2) {
        let Some((later, ..)) = places.iter().find(|(_, p, given)| *given && p > place) else {
            continue;
        };
        cx.error_spanned_by(
            off,
            format!(
                "positional `{off}` is not a tool input (`#[mcp_tool(cli_only)]` or `hide = true`), \
                 but positional `{later}` after it is: a tool call never gives `{off}`, so clap \
                 would read the value of `{later}` as `{off}`; put `{off}` after the tool's \
                 positionals, make it a flag (`#[arg(long)]`), or keep `{later}` off the tool too"
            ),
        );
    }
}

/// The own arguments of a command with subcommands (a struct with a `#[command(subcommand)]`
/// field, or such a variant). They are not tool inputs: a tool is one leaf command, and its
/// argv carries the command path and the leaf's arguments only. An optional one is simply
/// left to its default; one that clap requires (no default, no `env`) would fail every call
/// of the subtree, so it is a compile error naming it.
pub(super) fn check_parent_args<'a>(
    cx: &Ctxt,
    own: impl Iterator<Item = &'a syn::Field>,
    casing: Casing,
    env_casing: Casing,
) {
    for f in own {
        let _ = crate::attr::field_attrs(cx, &f.attrs);
        let clap = ClapAttrs::from_ast(cx, &f.attrs);
        if clap.flag(FLATTEN) || clap.get(SKIP).is_some() {
            continue;
        }
        let Some(ident) = f.ident.as_ref() else { continue };
        if clap_requires(f, ident, &clap, casing, env_casing) {
            cx.error_spanned_by(
                ident,
                format!(
                    "`{ident}` is required, but it is an argument of a command with subcommands, and \
                     those are not tool inputs (a tool is one leaf command; its argv holds only the \
                     leaf's arguments), so every tool call below this command would fail; give it a \
                     default (`default_value`, `Option<T>`) or move it into the leaf commands"
                ),
            );
        }
    }
}

/// Whether clap requires an argument that is not a tool input (a parent's, a hidden one):
/// required by clap's rules, and with no `env` to fill it in. What else [`arg`] would refuse
/// is about tool inputs, which these are not, so its errors go to a scratch context.
fn clap_requires(
    f: &syn::Field,
    ident: &Ident,
    clap: &ClapAttrs,
    casing: Casing,
    env_casing: Casing,
) -> bool {
    if clap.get(ENV).is_some() {
        return false;
    }
    let scratch = Ctxt::new();
    let parsed = arg(&scratch, f, ident, clap, casing, env_casing);
    let _ = scratch.check();
    parsed.is_some_and(|a| a.required)
}

fn arg(
    cx: &Ctxt,
    f: &syn::Field,
    ident: &Ident,
    clap: &ClapAttrs,
    casing: Casing,
    env_casing: Casing,
) -> Option<Arg> {
    // An explicit parser reads text (a duration parser behind a `u64` field takes `30s`, a
    // `key=value` parser builds a tuple); `value_parser!(T)` keeps the field's own type.
    let value_parser = clap.get(VALUE_PARSER).and_then(|a| a.value.as_ref());
    let parsed_as_text = value_parser.is_some_and(|expr| !is_value_parser_macro(expr));
    let ty = match Ty::from_type(&f.ty, parsed_as_text) {
        Ok(ty) => ty,
        Err(why) => {
            cx.error_spanned_by(&f.ty, format!("charly cannot type this argument: {}", why.0));
            return None;
        }
    };
    // clap: an explicit `id` is used verbatim wherever a name is derived from it.
    let explicit_id = clap.lit_str(cx, ID).flatten();
    let (id, derived) = match &explicit_id {
        Some(id) => (id.value(), false),
        None => (ident.unraw_string(), true),
    };
    let cased = |c: Casing| if derived { c.apply(&id) } else { id.clone() };
    let long = clap.lit_str(cx, LONG).map(|l| l.map_or_else(|| cased(casing), |l| l.value()));
    let short = match clap.get(SHORT) {
        None => None,
        Some(attr) => match attr.value.as_ref().map(|v| lit(v)) {
            None => cased(casing).chars().next(),
            Some(Some(syn::Lit::Char(c))) => Some(c.value()),
            Some(_) => {
                cx.error_spanned_by(attr.value.as_ref(), "charly needs a char literal for `short`");
                None
            }
        },
    };
    let action = action(cx, clap);
    let positional = long.is_none() && short.is_none();
    let has_default = [DEFAULT_VALUE, DEFAULT_VALUE_T, DEFAULT_VALUES, DEFAULT_VALUES_T]
        .into_iter()
        .any(|k| clap.get(k).is_some());
    let explicit_required = clap.get(REQUIRED).map(|_| clap.flag(REQUIRED));

    let (shape, value_ty, required) = match (&ty, action.as_deref()) {
        (_, Some("Count")) => (Shape::Count, f.ty.clone(), false),
        (Ty::Bool, Some("SetFalse")) => {
            check_flag_env(cx, clap, "true");
            (Shape::SetFalse, f.ty.clone(), false)
        }
        (Ty::Bool, None | Some("SetTrue")) if !positional => {
            check_flag_env(cx, clap, "false");
            match flag_default(clap) {
                FlagDefault::False => {}
                FlagDefault::True(expr) => cx.error_spanned_by(
                    expr,
                    "a flag that defaults to true must be switchable off: add \
                     `action = clap::ArgAction::Set` (then `--flag=false`) or use `ArgAction::SetFalse`",
                ),
                FlagDefault::Unknown(expr) => cx.error_spanned_by(
                    expr,
                    "charly needs a literal `true` or `false` as the default of a flag, to know whether \
                     the flag can be switched off",
                ),
            }
            (Shape::SetTrue, f.ty.clone(), false)
        }
        (Ty::Bool, _) => (Shape::Single, f.ty.clone(), explicit_required.unwrap_or(!has_default)),
        (Ty::Option(inner), _) => (Shape::Single, (*inner).clone(), explicit_required.unwrap_or(false)),
        (Ty::Vec(inner) | Ty::OptionVec(inner), _) => {
            let required = explicit_required.unwrap_or(false);
            (Shape::Many { min: usize::from(required), max: None }, (*inner).clone(), required)
        }
        (Ty::Other(t), Some("Append")) => (Shape::Many { min: 0, max: None }, (*t).clone(), false),
        (Ty::Other(t), _) => (Shape::Single, (*t).clone(), explicit_required.unwrap_or(!has_default)),
    };
    if matches!(action.as_deref(), Some("Help" | "HelpShort" | "HelpLong" | "Version")) {
        return None;
    }

    let scalar = match value_parser {
        Some(expr) if !is_value_parser_macro(expr) => Scalar::Text,
        Some(expr) => {
            let (min, max) = range_of(cx, expr);
            Scalar::Probe { min, max }
        }
        None => Scalar::Probe { min: None, max: None },
    };
    let possible = if clap.flag(VALUE_ENUM) {
        Possible::ValueEnum
    } else if let Some(expr) = value_parser {
        Possible::Parser(expr.clone())
    } else {
        Possible::Probe
    };
    // A positional's values all follow the `--`, so clap counts them against `num_args`:
    // the array carries the same bounds. (A flag is sent one `--flag=value` per value.)
    let num_args = if !positional {
        check_num_args(cx, clap);
        None
    } else {
        check_not_last(cx, clap);
        num_args_of(cx, clap)
    };
    let index = positional.then(|| index_of(cx, clap)).flatten();
    let delimiter = match clap.get(VALUE_DELIMITER).and_then(|a| a.value.as_ref()) {
        None => None,
        Some(expr) => match lit(expr) {
            Some(syn::Lit::Char(c)) => Some(c.value()),
            _ => {
                cx.error_spanned_by(expr, "charly needs a char literal for `value_delimiter`");
                None
            }
        },
    };
    let defaults = if let Some(a) = clap.get(DEFAULT_VALUES_T) {
        a.value.clone().map_or(Defaults::None, Defaults::TypedMany)
    } else if let Some(a) = clap.get(DEFAULT_VALUE_T) {
        Defaults::Typed(a.value.clone())
    } else if let Some(a) = clap.get(DEFAULT_VALUES) {
        a.value.clone().map_or(Defaults::None, |e| Defaults::Texts(e, true))
    } else if let Some(a) = clap.get(DEFAULT_VALUE) {
        a.value.clone().map_or(Defaults::None, |e| Defaults::Texts(e, false))
    } else {
        Defaults::None
    };

    // A list with a default cannot be sent empty: clap reads no values as "use the default".
    let shape = match shape {
        Shape::Many { min, max } if !matches!(defaults, Defaults::None) => {
            Shape::Many { min: min.max(1), max }
        }
        shape => shape,
    };
    // `num_args = 2` (or `2..`, `1..=3`): at least 2 values when any are given. An empty array
    // stands for the argument left out, so a minimum of 0 or 1 changes nothing.
    let shape = match (shape, num_args) {
        (Shape::Many { min, max }, Some((lo, hi))) => {
            Shape::Many { min: if lo >= 2 { min.max(lo) } else { min }, max: hi.or(max) }
        }
        (shape, _) => shape,
    };

    match shape {
        Shape::Count => check_absent_env(cx, clap, "a counted flag (`ArgAction::Count`)", "0"),
        Shape::Many { min: 0, .. } => check_absent_env(cx, clap, "a list argument", "an empty list"),
        _ => {}
    }

    let (doc_short, doc_long) = doc_text(&f.attrs, clap.flag(VERBATIM_DOC_COMMENT));
    let help = match clap.get(HELP).and_then(|a| a.value.as_ref()) {
        Some(expr) => Some(quote!(#expr)),
        None => doc_short.map(|s| quote!(#s)),
    };
    let long_help = match clap.get(LONG_HELP).and_then(|a| a.value.as_ref()) {
        Some(expr) => Some(quote!(#expr)),
        None => doc_long.map(|s| quote!(#s)),
    };
    let env = clap.lit_str(cx, ENV).map(|e| e.map_or_else(|| cased(env_casing), |e| e.value()));
    // clap takes a value from `env` when the command line has none, so an argument with `env`
    // is never required of a call (a model is not asked for a secret the server holds); when
    // the environment lacks it too, clap's own "required" error names it. (A list keeps its
    // `minItems`: clap still wants at least one value when one is given.)
    let required = required && env.is_none();

    // A positional's default may be written out to keep a later positional in its place when
    // its text is a constant and an explicit value is the same to clap as the default.
    let send_default = positional
        && env.is_none()
        && !PRESENCE_KEYS.iter().any(|k| clap.get(*k).is_some())
        && match &defaults {
            Defaults::None => false,
            Defaults::Texts(e, _) | Defaults::Typed(Some(e)) | Defaults::TypedMany(e) => is_constant(e),
            Defaults::Typed(None) => true,
        };

    // clap's messages spell a positional by its value name; a non-literal one is left to the
    // default (the id), which only makes the message less exact.
    let value_name = if positional {
        clap.get(VALUE_NAME).and_then(|a| a.value.as_ref()).and_then(|e| match lit(e) {
            Some(syn::Lit::Str(s)) => Some(s.value()),
            _ => None,
        })
    } else {
        None
    };

    Some(Arg {
        span: ident.span(),
        send_default,
        value_name,
        id,
        long,
        short,
        shape,
        value_ty,
        scalar,
        required,
        index,
        index_given: positional && clap.get(INDEX).is_some(),
        delimiter,
        help,
        long_help,
        env,
        defaults,
        possible,
    })
}
