//! Stage 1: attributes.
//!
//! clap's attributes (`#[arg]`, `#[command]`, `#[clap]`) are read without rejecting any key:
//! clap turns keys it does not interpret into builder calls, so the set is open. We act on the
//! keys that change the schema or the argv (see `symbol.rs`) and ignore the rest.
//! Our own `#[mcp_tool(...)]` accepts only its listed keys; anything else is an error that
//! lists them and suggests the closest.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, ExprLit, Ident, Lit, LitStr, Token, Type};

use crate::ctxt::Ctxt;
use crate::symbol::*;

/// One `key`, `key = value` or `key(args)` inside a clap attribute.
pub(crate) struct ClapAttr {
    pub(crate) key: Ident,
    pub(crate) value: Option<Expr>,
}

impl Parse for ClapAttr {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let key = Ident::parse_any(input)?;
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            Some(input.parse()?)
        } else if input.peek(syn::token::Paren) {
            // `key(args)`: a builder call we do not interpret; keep nothing.
            let content;
            syn::parenthesized!(content in input);
            content.parse::<proc_macro2::TokenStream>()?;
            None
        } else {
            None
        };
        Ok(ClapAttr { key, value })
    }
}

/// The clap attributes of one item, in source order.
pub(crate) struct ClapAttrs(Vec<ClapAttr>);

impl ClapAttrs {
    /// Reads `#[arg(..)]`, `#[command(..)]` and `#[clap(..)]`; a malformed one is an error.
    pub(crate) fn from_ast(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut all = Vec::new();
        for attr in attrs {
            let path = attr.path();
            if !(*path == ARG || *path == COMMAND || *path == CLAP) {
                continue;
            }
            match attr.parse_args_with(Punctuated::<ClapAttr, Token![,]>::parse_terminated) {
                Ok(list) => all.extend(list),
                Err(err) => cx.syn_error(err),
            }
        }
        ClapAttrs(all)
    }

    /// The last setting of `key` (clap applies them in order, so the last wins).
    pub(crate) fn get(&self, key: Symbol) -> Option<&ClapAttr> {
        self.0.iter().rev().find(|a| a.key == key)
    }

    /// Whether `key` is set, bare or with a value other than `false`.
    pub(crate) fn flag(&self, key: Symbol) -> bool {
        match self.get(key) {
            None => false,
            Some(ClapAttr { value: None, .. }) => true,
            Some(ClapAttr { value: Some(v), .. }) => !matches!(lit(v), Some(Lit::Bool(b)) if !b.value),
        }
    }

    /// The value of `key = "literal"`; `Some(None)` for the bare key; an error when the value
    /// is not a string literal (the derive must know names at compile time).
    pub(crate) fn lit_str(&self, cx: &Ctxt, key: Symbol) -> Option<Option<LitStr>> {
        let attr = self.get(key)?;
        match &attr.value {
            None => Some(None),
            Some(value) => {
                match lit(value) {
                    Some(Lit::Str(s)) => Some(Some(s.clone())),
                    _ => {
                        cx.error_spanned_by(
                        value,
                        format!("charly needs a string literal for `{key}` to name the tool input at compile time"),
                    );
                        None
                    }
                }
            }
        }
    }
}

/// The literal inside an expression, looking through a group (`(..)`) left by macros.
pub(crate) fn lit(expr: &Expr) -> Option<&Lit> {
    match expr {
        Expr::Lit(ExprLit { lit, .. }) => Some(lit),
        Expr::Group(g) => lit(&g.expr),
        Expr::Paren(p) => lit(&p.expr),
        _ => None,
    }
}

/// Where a `#[mcp_tool]` attribute was found.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Struct,
    Enum,
    Variant,
}

/// `#[mcp_tool(...)]`, with the span of each setting for error messages.
#[derive(Default)]
pub(crate) struct McpAttrs {
    pub(crate) destructive: Option<(Span, String)>,
    pub(crate) skip: Option<Span>,
    pub(crate) name: Option<LitStr>,
    pub(crate) idempotent: Option<Span>,
    pub(crate) open_world: Option<Span>,
    /// `output = Type`: the leaf's report type, whose schema becomes its `outputSchema`.
    pub(crate) output: Option<Type>,
    /// `crate = "path"`: where generated code finds the runtime (default `::charly`).
    pub(crate) krate: Option<syn::Path>,
}

impl McpAttrs {
    pub(crate) fn from_ast(cx: &Ctxt, attrs: &[Attribute], target: Target) -> Self {
        let mut out = McpAttrs::default();
        for attr in attrs.iter().filter(|a| *a.path() == MCP_TOOL) {
            let result = attr.parse_nested_meta(|meta| {
                let path = &meta.path;
                let span = syn::spanned::Spanned::span(path);
                let set = |slot_set: bool, cx: &Ctxt| {
                    if slot_set {
                        cx.error_spanned_by(path, format!("duplicate charly attribute `{}`", ident_of(path)));
                    }
                };
                if *path == DESTRUCTIVE {
                    set(out.destructive.is_some(), cx);
                    let reason = if meta.input.peek(Token![=]) {
                        meta.value()?.parse::<LitStr>()?.value()
                    } else {
                        String::new()
                    };
                    out.destructive = Some((span, reason));
                } else if *path == SKIP {
                    set(out.skip.is_some(), cx);
                    out.skip = Some(span);
                } else if *path == NAME {
                    set(out.name.is_some(), cx);
                    out.name = Some(meta.value()?.parse::<LitStr>()?);
                } else if *path == IDEMPOTENT {
                    set(out.idempotent.is_some(), cx);
                    out.idempotent = Some(span);
                } else if *path == OPEN_WORLD {
                    set(out.open_world.is_some(), cx);
                    out.open_world = Some(span);
                } else if *path == OUTPUT {
                    set(out.output.is_some(), cx);
                    if !meta.input.peek(Token![=]) {
                        return Err(meta
                            .error("`output` names the leaf's report type: `#[mcp_tool(output = Report)]`"));
                    }
                    let value = meta.value()?;
                    if value.peek(LitStr) {
                        let lit: LitStr = value.parse()?;
                        return Err(syn::Error::new(
                            lit.span(),
                            format!(
                                "`output` takes a type, not a string: `#[mcp_tool(output = {})]`",
                                lit.value()
                            ),
                        ));
                    }
                    out.output = Some(value.parse::<Type>()?);
                } else if *path == CLI_ONLY {
                    return Err(meta.error(
                        "`cli_only` leaves one argument out of its tool: put it on a field, not on a command \
                         (`#[mcp_tool(skip)]` leaves out a whole command)",
                    ));
                } else if *path == CRATE {
                    if target == Target::Variant {
                        return Err(meta.error("`crate` goes on the struct or enum that derives McpTool"));
                    }
                    set(out.krate.is_some(), cx);
                    out.krate = Some(meta.value()?.parse::<LitStr>()?.parse::<syn::Path>()?);
                } else {
                    let key = ident_of(path);
                    let valid = MCP_TOOL_KEYS.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
                    let hint = suggest(&key).map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
                    return Err(meta
                        .error(format!("unknown charly attribute `{key}` (expected one of {valid}){hint}")));
                }
                Ok(())
            });
            if let Err(err) = result {
                cx.syn_error(err);
            }
        }
        if target == Target::Enum
            && let Some(name) = &out.name
        {
            cx.error_spanned_by(
                name,
                "#[mcp_tool(name = \"...\")] names one command: put it on a variant or a struct, not on an enum",
            );
        }
        if target == Target::Enum
            && let Some(output) = &out.output
        {
            cx.error_spanned_by(
                output,
                "#[mcp_tool(output = ...)] is the report type of one command: put it on a leaf \
                 (a variant or an `Args` struct), not on a `Subcommand` enum",
            );
        }
        out
    }
}

fn ident_of(path: &syn::Path) -> String {
    path.get_ident().map(|i| i.to_string()).unwrap_or_else(|| quote::quote!(#path).to_string())
}

/// The known key closest to `key`, when it is close enough to be a typo.
fn suggest(key: &str) -> Option<&'static str> {
    MCP_TOOL_KEYS
        .iter()
        .map(|k| (k.0, strsim::jaro_winkler(key, k.0)))
        .filter(|(_, score)| *score > 0.8)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(k, _)| k)
}

/// `#[mcp_tool(...)]` on a field: only `cli_only` (the argument stays off the tool), whose
/// span is returned. Anything else is an error: the attribute names and marks commands, not
/// arguments.
pub(crate) fn field_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Option<Span> {
    let mut cli_only = None;
    for attr in attrs.iter().filter(|a| *a.path() == MCP_TOOL) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path == CLI_ONLY && !meta.input.peek(Token![=]) && !meta.input.peek(syn::token::Paren) {
                if cli_only.is_some() {
                    cx.error_spanned_by(&meta.path, "duplicate charly attribute `cli_only`");
                }
                cli_only = Some(syn::spanned::Spanned::span(&meta.path));
                Ok(())
            } else {
                Err(meta.error("not a field key"))
            }
        });
        if result.is_err() {
            cx.error_spanned_by(
                attr,
                "#[mcp_tool] applies to commands (structs, enums and their variants), not to fields; \
                 a field takes only `#[mcp_tool(cli_only)]`",
            );
        }
    }
    cli_only
}

#[cfg(test)]
mod tests {
    #[test]
    fn suggestions() {
        assert_eq!(super::suggest("destructve"), Some("destructive"));
        assert_eq!(super::suggest("idempotnet"), Some("idempotent"));
        assert_eq!(super::suggest("openworld"), Some("open_world"));
        assert_eq!(super::suggest("ouptut"), Some("output"));
        assert_eq!(super::suggest("zzz"), None);
    }
}
