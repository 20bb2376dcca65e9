//! The rules on single clap attributes of an argument: reading the literals the derive
//! needs (`index`, `num_args`, `range`, flag defaults) and refusing what a tool call could not
//! send as clap expects it.

use syn::Expr;

use super::{Arg, Field};
use crate::attr::{ClapAttrs, lit};
use crate::ctxt::Ctxt;
use crate::symbol::*;

/// The last segment of `action = ArgAction::X` (or `action = X`), `None` when not given.
pub(super) fn action(cx: &Ctxt, clap: &ClapAttrs) -> Option<String> {
    let expr = clap.get(ACTION)?.value.as_ref()?;
    match expr {
        Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        other => {
            cx.error_spanned_by(other, "charly needs a path for `action`, such as `clap::ArgAction::Count`");
            None
        }
    }
}

/// A flag taking no value sends its default by being left out of the argv, and with `env`
/// clap then reads the server's environment instead: a call asking for the default would
/// run with whatever the variable says. `ArgAction::Set` sends `--flag=false` explicitly.
pub(super) fn check_flag_env(cx: &Ctxt, clap: &ClapAttrs, default: &str) {
    let Some(env) = clap.get(ENV) else { return };
    cx.error_spanned_by(
        &env.key,
        format!(
            "a flag with `env` cannot be set to {default} by a tool call: {default} is sent by leaving \
             the flag out, and clap then reads the variable from the server's environment; add \
             `action = clap::ArgAction::Set` (then `--flag={default}` is sent; give `default_value_t = \
             {default}` to keep it optional), drop `env`, or keep the flag off the tool with \
             `#[mcp_tool(cli_only)]`"
        ),
    );
}

/// A counted flag (`ArgAction::Count`) sends 0, and a list sends `[]`, by being left out of
/// the argv, and with `env` clap then reads the server's environment instead: a call asking
/// for 0 or for no values would run with whatever the variable says. (A list that must have
/// values, `required` or with a default, cannot be sent empty, so it is not refused.)
pub(super) fn check_absent_env(cx: &Ctxt, clap: &ClapAttrs, what: &str, zero: &str) {
    let Some(env) = clap.get(ENV) else { return };
    cx.error_spanned_by(
        &env.key,
        format!(
            "{what} with `env` cannot be set to {zero} by a tool call: {zero} is sent by leaving the \
             argument out, and clap then reads the variable from the server's environment; drop \
             `env`, or keep the argument off the tool with `#[mcp_tool(cli_only)]`"
        ),
    );
}

/// Whether a default expression is a constant the derive can see: a literal, a path (a
/// `const`, an enum variant), or an array or reference of those. Its text then is the same on
/// every call, so the argv rebuild may write it out.
pub(super) fn is_constant(expr: &Expr) -> bool {
    match peel_expr(expr) {
        Expr::Lit(_) | Expr::Path(_) => true,
        Expr::Unary(syn::ExprUnary { op: syn::UnOp::Neg(_), expr, .. }) => is_constant(expr),
        Expr::Reference(r) => is_constant(&r.expr),
        Expr::Array(a) => a.elems.iter().all(is_constant),
        _ => false,
    }
}

/// The default of a `SetTrue` flag, as far as the literals tell.
pub(super) enum FlagDefault<'a> {
    /// None given, or a literal `false`.
    False,
    /// A literal `true` (`default_value_t = true`, `default_value = "true"`).
    True(&'a Expr),
    /// An expression the derive cannot evaluate.
    Unknown(&'a Expr),
}

pub(super) fn flag_default(clap: &ClapAttrs) -> FlagDefault<'_> {
    for key in [DEFAULT_VALUE_T, DEFAULT_VALUE] {
        let Some(expr) = clap.get(key).and_then(|a| a.value.as_ref()) else { continue };
        return match lit(expr) {
            Some(syn::Lit::Bool(b)) if b.value => FlagDefault::True(expr),
            Some(syn::Lit::Str(s)) if s.value() == "true" => FlagDefault::True(expr),
            Some(syn::Lit::Bool(_)) => FlagDefault::False,
            Some(syn::Lit::Str(s)) if s.value() == "false" => FlagDefault::False,
            _ => FlagDefault::Unknown(expr),
        };
    }
    FlagDefault::False
}

pub(super) fn is_value_parser_macro(expr: &Expr) -> bool {
    match expr {
        Expr::Macro(m) => m.mac.path.segments.last().is_some_and(|s| s.ident == "value_parser"),
        Expr::MethodCall(call) => is_value_parser_macro(&call.receiver),
        _ => false,
    }
}

/// The inclusive bounds of `value_parser!(T).range(a..b)` (any `..`/`..=` form). clap checks
/// the range when parsing, so the schema must carry it: the bounds have to be integer literals
/// the derive can read.
pub(super) fn range_of(cx: &Ctxt, expr: &Expr) -> (Option<i128>, Option<i128>) {
    let Expr::MethodCall(call) = expr else { return (None, None) };
    let outer = range_of(cx, &call.receiver);
    if call.method != RANGE {
        return outer;
    }
    let bad = |span: &dyn quote::ToTokens| {
        cx.error_spanned_by(
            span,
            "charly needs integer literals for the bounds of `range` (like `.range(1..=65535)`) \
             to put them in the schema",
        );
        (None, None)
    };
    let Some(Expr::Range(range)) = call.args.first().map(peel_expr) else {
        return bad(&call.args);
    };
    let bound = |e: &Option<Box<Expr>>| -> Result<Option<i128>, ()> {
        match e.as_deref().map(peel_expr) {
            None => Ok(None),
            Some(e) => int_lit(e).map(Some).ok_or(()),
        }
    };
    match (bound(&range.start), bound(&range.end)) {
        (Ok(min), Ok(max)) => {
            let max = match range.limits {
                syn::RangeLimits::HalfOpen(_) => max.map(|m| m - 1),
                syn::RangeLimits::Closed(_) => max,
            };
            (min, max)
        }
        _ => bad(range),
    }
}

/// `index = N`: a positional's place among the positionals, which clap follows instead of
/// the declaration order. The rebuilt argv has to follow it too, so it must be a literal.
pub(super) fn index_of(cx: &Ctxt, clap: &ClapAttrs) -> Option<usize> {
    let expr = clap.get(INDEX)?.value.as_ref()?;
    match int_lit(expr).and_then(|n| usize::try_from(n).ok()).filter(|n| *n >= 1) {
        Some(n) => Some(n),
        None => {
            cx.error_spanned_by(
                expr,
                "charly needs a positive integer literal for `index` (like `index = 1`) to put the \
                 positionals of a tool call in clap's order",
            );
            None
        }
    }
}

/// clap numbers the positionals without an `index` from 1 in declaration order, next to
/// the ones that give one; the rebuilt argv follows `index` only when every positional of the
/// command gives one (or none does).
pub(super) fn check_indexes(cx: &Ctxt, fields: &[Field<'_>]) {
    let positionals: Vec<&Arg> = fields
        .iter()
        .filter_map(|f| match f {
            Field::Arg(a) if a.long.is_none() && a.short.is_none() => Some(a),
            _ => None,
        })
        .collect();
    let Some(with) = positionals.iter().find(|a| a.index_given) else { return };
    for without in positionals.iter().filter(|a| !a.index_given) {
        cx.syn_error(syn::Error::new(
            without.span,
            format!(
                "positional `{}` has no `index`, but `{}` has one: charly orders a tool call's \
                 positionals by `index` only when every positional of the command gives one; give \
                 each positional an `#[arg(index = N)]`, or none",
                without.id, with.id
            ),
        ));
    }
}

/// The argv is rebuilt with every positional after one `--` (so a value starting with `-` is
/// never read as a flag). clap's `last = true` wants the other positionals *before* the `--`,
/// so such a command would get its positionals in the wrong places when called as a tool.
pub(super) fn check_not_last(cx: &Ctxt, clap: &ClapAttrs) {
    if !clap.flag(LAST) {
        return;
    }
    let attr = clap.get(LAST).expect("flag(LAST) implies get(LAST)");
    cx.error_spanned_by(
        &attr.key,
        "charly puts every positional after one `--` when it rebuilds a tool call's argv, and a \
         `last = true` positional needs the others before it; take the trailing values with \
         `trailing_var_arg = true` (and `allow_hyphen_values = true`) on the command's last `Vec<String>` positional",
    );
}

/// The literal bounds of `num_args`: `2` is `(2, Some(2))`, `1..=3` is `(1, Some(3))`, `2..`
/// is `(2, None)`; anything else is an error (the schema must carry clap's count).
pub(super) fn num_args_of(cx: &Ctxt, clap: &ClapAttrs) -> Option<(usize, Option<usize>)> {
    let expr = clap.get(NUM_ARGS)?.value.as_ref()?;
    let count = |e: &Expr| int_lit(e).and_then(|n| usize::try_from(n).ok());
    let bounds = match peel_expr(expr) {
        Expr::Range(range) => {
            let lo = match range.start.as_deref() {
                None => Some(0),
                Some(start) => count(start),
            };
            let hi = match (range.end.as_deref(), &range.limits) {
                (None, _) => Some(None),
                (Some(end), syn::RangeLimits::Closed(_)) => count(end).map(Some),
                (Some(end), syn::RangeLimits::HalfOpen(_)) => count(end).map(|n| n.checked_sub(1)),
            };
            lo.zip(hi)
        }
        other => count(other).map(|n| (n, Some(n))),
    };
    if bounds.is_none() {
        cx.error_spanned_by(
            expr,
            "charly needs an integer literal or a literal range for `num_args` (like `1..`)",
        );
    }
    bounds
}

/// A flag is rebuilt as one `--flag=value` per value, so it must take one value per
/// occurrence: `num_args` asking for two or more (`2`, `2..`, `3..=4`) cannot be sent.
pub(super) fn check_num_args(cx: &Ctxt, clap: &ClapAttrs) {
    let Some(expr) = clap.get(NUM_ARGS).and_then(|a| a.value.as_ref()) else { return };
    let min = match peel_expr(expr) {
        Expr::Range(range) => match range.start.as_deref() {
            None => Some(0),
            Some(start) => int_lit(start),
        },
        other => int_lit(other),
    };
    match min {
        Some(min) if min >= 2 => cx.error_spanned_by(
            expr,
            format!(
                "charly sends a flag's values as one `--flag=value` each, but this flag needs at least \
                 {min} values per occurrence; take one value per occurrence (`Vec<T>`, repeated flags)"
            ),
        ),
        Some(_) => {}
        None => cx.error_spanned_by(
            expr,
            "charly needs an integer literal or a literal range for `num_args` (like `1..`)",
        ),
    }
}

pub(super) fn peel_expr(expr: &Expr) -> &Expr {
    match expr {
        Expr::Group(g) => peel_expr(&g.expr),
        Expr::Paren(p) => peel_expr(&p.expr),
        e => e,
    }
}

/// An integer literal, possibly negated and suffixed: `1`, `-5`, `1024u16`.
pub(super) fn int_lit(expr: &Expr) -> Option<i128> {
    match peel_expr(expr) {
        Expr::Unary(syn::ExprUnary { op: syn::UnOp::Neg(_), expr, .. }) => int_lit(expr).map(|n| -n),
        e => match lit(e) {
            Some(syn::Lit::Int(i)) => i.base10_parse::<i128>().ok(),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(src: &str) -> Result<(Option<i128>, Option<i128>), String> {
        let cx = Ctxt::new();
        let bounds = range_of(&cx, &syn::parse_str(src).unwrap());
        cx.check().map(|()| bounds).map_err(|e| e.to_string())
    }

    #[test]
    fn ranges_read_like_clap() {
        assert_eq!(range("clap::value_parser!(u16).range(1..)"), Ok((Some(1), None)));
        assert_eq!(range("value_parser!(u16).range(1..1024)"), Ok((Some(1), Some(1023))));
        assert_eq!(range("value_parser!(i64).range(-5..=5)"), Ok((Some(-5), Some(5))));
        assert_eq!(range("value_parser!(u8).range(..=9u8)"), Ok((None, Some(9))));
        assert_eq!(range("value_parser!(u16)"), Ok((None, None)));
        assert!(range("value_parser!(u16).range(LOW..)").unwrap_err().contains("integer literals"));
        assert!(range("value_parser!(u16).range(r)").unwrap_err().contains("integer literals"));
    }

    #[test]
    fn num_args_needs_one_value_per_flag() {
        let check = |src: &str| {
            let cx = Ctxt::new();
            let attrs: syn::ItemStruct =
                syn::parse_str(&format!("#[arg(long, num_args = {src})] struct S;")).unwrap();
            check_num_args(&cx, &ClapAttrs::from_ast(&cx, &attrs.attrs));
            cx.check().map_err(|e| e.to_string())
        };
        for ok in ["1", "0..=1", "1..", "..", "0"] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        for bad in ["2", "2..", "3..=4"] {
            assert!(check(bad).unwrap_err().contains("one `--flag=value` each"), "{bad}");
        }
        assert!(check("N").unwrap_err().contains("literal"));
    }
}
