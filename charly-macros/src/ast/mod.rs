//! Stage 2: the intermediate model. Everything the code generator needs, resolved by clap's
//! rules (names, casing, required, actions), each part keeping its source for error spans.
//! Containers and variants are here; fields and arguments in [`field`].

mod field;

pub(crate) use field::{Arg, Defaults, Field, Possible, Scalar, Shape};
use field::{check_parent_args, fields};

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Data, DeriveInput, Fields, Ident, LitStr, Type};

use crate::attr::{ClapAttrs, McpAttrs, Target};
use crate::case::{CASINGS, Casing};
use crate::ctxt::Ctxt;
use crate::doc::doc_text;
use crate::symbol::*;
use crate::ty::Ty;

/// What the derive was applied to.
pub(crate) enum Input<'a> {
    /// A struct without a subcommand field: a leaf command.
    Leaf { node: Node, fields: Vec<Field<'a>> },
    /// A struct with a `#[command(subcommand)]` field: its own arguments are not tool inputs
    /// (a tool is one leaf; its argv carries only the leaf's arguments), so none may be
    /// required ([`field::check_parent_args`]).
    Root { node: Node, subcommand: &'a Type },
    /// A `Subcommand` enum.
    Branch { node: Node, variants: Vec<Variant<'a>> },
}

/// The derive input with its model.
pub(crate) struct Container<'a> {
    pub(crate) original: &'a DeriveInput,
    pub(crate) input: Input<'a>,
}

/// A command's own attributes (`Node` in the runtime).
pub(crate) struct Node {
    /// The argv segment: clap's name of a variant.
    pub(crate) segment: Option<String>,
    /// `#[command(name = "..")]` when the segment was given, for error spans.
    pub(crate) segment_lit: Option<LitStr>,
    /// The name clap gives a `Parser` root: `#[command(name)]`, else the package name.
    pub(crate) root_name: Option<String>,
    pub(crate) about: Option<TokenStream>,
    pub(crate) long_about: Option<TokenStream>,
    pub(crate) mcp: McpAttrs,
}

/// One variant of a `Subcommand` enum.
pub(crate) struct Variant<'a> {
    pub(crate) original: &'a syn::Variant,
    pub(crate) node: Node,
    pub(crate) kind: VariantKind<'a>,
}

pub(crate) enum VariantKind<'a> {
    /// A unit or named-field variant: a leaf whose arguments are these fields.
    Leaf(Vec<Field<'a>>),
    /// `Name(T)`: the command named by the variant is the `Args` struct `T`.
    Newtype(&'a Type),
    /// `#[command(subcommand)] Name(T)`, or `Name { .., #[command(subcommand)] sub: T }`: the
    /// command named by the variant is a branch, whose subcommands are the `Subcommand` enum
    /// `T`'s (the variant's own arguments are not tool inputs, as a `Root`'s are not).
    Subcommand(&'a Type),
    /// `#[command(flatten)] Name(T)`: `T`'s subcommands sit at this level.
    Flatten(&'a Type),
    /// `#[mcp_tool(skip)]`, `#[command(skip)]` or `#[command(external_subcommand)]`.
    Skip,
}

impl<'a> Container<'a> {
    pub(crate) fn from_ast(cx: &Ctxt, input: &'a DeriveInput) -> Option<Self> {
        let clap = ClapAttrs::from_ast(cx, &input.attrs);
        let casing = casing_of(cx, &clap, RENAME_ALL, Casing::Kebab);
        let env_casing = casing_of(cx, &clap, RENAME_ALL_ENV, Casing::ScreamingSnake);
        let input_model = match &input.data {
            Data::Struct(data) => {
                let mut node = node(cx, &input.attrs, &clap, Target::Struct);
                node.root_name = Some(match clap.lit_str(cx, NAME) {
                    Some(Some(name)) => name.value(),
                    _ => String::new(), // the package name, filled in by expand
                });
                let named = match &data.fields {
                    Fields::Named(named) => named,
                    Fields::Unit => {
                        return Some(Container {
                            original: input,
                            input: Input::Leaf { node, fields: vec![] },
                        });
                    }
                    Fields::Unnamed(f) => {
                        cx.error_spanned_by(
                            f,
                            "clap commands need named fields: `struct Name { field: Type }`",
                        );
                        return None;
                    }
                };
                let subcommand =
                    named.named.iter().find(|f| ClapAttrs::from_ast(cx, &f.attrs).flag(SUBCOMMAND));
                match subcommand {
                    Some(field) => {
                        refuse_cli_only_subcommand(cx, field);
                        let ty = option_inner(&field.ty).unwrap_or(&field.ty);
                        let own = named.named.iter().filter(|f| !std::ptr::eq(*f, field));
                        check_parent_args(cx, own, casing, env_casing);
                        Input::Root { node, subcommand: ty }
                    }
                    None => Input::Leaf { node, fields: fields(cx, &named.named, casing, env_casing) },
                }
            }
            Data::Enum(data) => {
                let node = node(cx, &input.attrs, &clap, Target::Enum);
                let variants = data.variants.iter().map(|v| variant(cx, v, casing, env_casing)).collect();
                Input::Branch { node, variants }
            }
            Data::Union(u) => {
                cx.error_spanned_by(
                    u.union_token,
                    "McpTool cannot be derived for unions: derive it on clap command structs and enums",
                );
                return None;
            }
        };
        Some(Container { original: input, input: input_model })
    }
}

fn casing_of(cx: &Ctxt, clap: &ClapAttrs, key: Symbol, default: Casing) -> Casing {
    match clap.lit_str(cx, key) {
        Some(Some(lit)) => Casing::from_str(&lit.value()).unwrap_or_else(|| {
            cx.error_spanned_by(
                &lit,
                format!("unsupported casing `{}` (clap accepts {CASINGS})", lit.value()),
            );
            default
        }),
        _ => default,
    }
}

fn node(cx: &Ctxt, attrs: &[syn::Attribute], clap: &ClapAttrs, target: Target) -> Node {
    let (doc_short, doc_long) = doc_text(attrs, clap.flag(VERBATIM_DOC_COMMENT));
    // Explicit `about`/`long_about` win over the doc comment, as in clap. A bare `about`
    // is the package description.
    let about = match clap.get(ABOUT) {
        Some(a) => match &a.value {
            Some(expr) => Some(quote!(#expr)),
            None => Some(quote!(::core::env!("CARGO_PKG_DESCRIPTION"))),
        },
        None => doc_short.map(|s| quote!(#s)),
    };
    let long_about = match clap.get(LONG_ABOUT).and_then(|a| a.value.as_ref()) {
        Some(expr) => Some(quote!(#expr)),
        None => doc_long.map(|s| quote!(#s)),
    };
    Node {
        segment: None,
        segment_lit: None,
        root_name: None,
        about,
        long_about,
        mcp: McpAttrs::from_ast(cx, attrs, target),
    }
}

fn variant<'a>(cx: &Ctxt, v: &'a syn::Variant, casing: Casing, env_casing: Casing) -> Variant<'a> {
    let clap = ClapAttrs::from_ast(cx, &v.attrs);
    let mut node = node(cx, &v.attrs, &clap, Target::Variant);
    let ident = v.ident.unraw_string();
    node.segment_lit = clap.lit_str(cx, NAME).flatten();
    node.segment = Some(match &node.segment_lit {
        Some(name) => name.value(),
        None => casing.apply(&ident),
    });
    let skipped =
        node.mcp.skip.is_some() || clap.flag(SKIP) || clap.flag(EXTERNAL_SUBCOMMAND) || clap.flag(HIDE);
    let kind = if skipped {
        VariantKind::Skip
    } else {
        match &v.fields {
            Fields::Unit => VariantKind::Leaf(vec![]),
            Fields::Named(named) => {
                let casing = casing_of(cx, &clap, RENAME_ALL, casing);
                let env_casing = casing_of(cx, &clap, RENAME_ALL_ENV, env_casing);
                let subcommand =
                    named.named.iter().find(|f| ClapAttrs::from_ast(cx, &f.attrs).flag(SUBCOMMAND));
                match subcommand {
                    // `Name { flags.., #[command(subcommand)] sub: T }`: a branch, as a struct
                    // with a subcommand field is; its own flags are not tool inputs.
                    Some(field) => {
                        refuse_cli_only_subcommand(cx, field);
                        let own = named.named.iter().filter(|f| !std::ptr::eq(*f, field));
                        check_parent_args(cx, own, casing, env_casing);
                        VariantKind::Subcommand(option_inner(&field.ty).unwrap_or(&field.ty))
                    }
                    None => VariantKind::Leaf(fields(cx, &named.named, casing, env_casing)),
                }
            }
            Fields::Unnamed(f) if f.unnamed.len() == 1 => {
                let ty = &f.unnamed[0].ty;
                let ty = option_inner(ty).unwrap_or(ty);
                if clap.flag(FLATTEN) {
                    VariantKind::Flatten(ty)
                } else if clap.flag(SUBCOMMAND) {
                    VariantKind::Subcommand(ty)
                } else {
                    VariantKind::Newtype(ty)
                }
            }
            Fields::Unnamed(f) => {
                cx.error_spanned_by(f, "a subcommand variant holds one type: `Name(Args)`");
                VariantKind::Skip
            }
        }
    };
    if matches!(kind, VariantKind::Flatten(_))
        && let Some(name) = &node.mcp.name
    {
        cx.error_spanned_by(name, "a flattened variant adds no command of its own to name");
    }
    Variant { original: v, node, kind }
}

pub(super) fn option_inner(ty: &Type) -> Option<&Type> {
    match Ty::from_type(ty, false) {
        Ok(Ty::Option(inner)) => Some(inner),
        _ => None,
    }
}

pub(super) trait UnrawString {
    fn unraw_string(&self) -> String;
}

impl UnrawString for Ident {
    fn unraw_string(&self) -> String {
        use syn::ext::IdentExt;
        self.unraw().to_string()
    }
}

impl Node {
    /// The span to blame for a name problem of this node.
    pub(crate) fn name_lit(&self) -> Option<&LitStr> {
        self.mcp.name.as_ref()
    }
}

impl Variant<'_> {
    pub(crate) fn span(&self) -> Span {
        self.original.ident.span()
    }

    /// Where this variant's command name comes from: `#[command(name = "..")]`, else the
    /// variant's identifier.
    pub(crate) fn segment_span(&self) -> Span {
        self.node.segment_lit.as_ref().map_or_else(|| self.span(), LitStr::span)
    }

    /// Where its tool name comes from: `#[mcp_tool(name = "..")]`, else the command name.
    pub(crate) fn name_span(&self) -> Span {
        self.node.name_lit().map_or_else(|| self.segment_span(), LitStr::span)
    }
}

/// `#[mcp_tool(cli_only)]` on a `#[command(subcommand)]` field is a compile error: it keeps
/// one argument off its tool, and a subcommand is not an argument (it was accepted and
/// ignored).
fn refuse_cli_only_subcommand(cx: &Ctxt, field: &syn::Field) {
    if crate::attr::field_attrs(cx, &field.attrs).is_some() {
        cx.error_spanned_by(
            field,
            "`cli_only` keeps one argument off its tool, and a subcommand is not an argument: leave \
             subcommands out of the catalog with `#[mcp_tool(skip)]` on their variants",
        );
    }
}
