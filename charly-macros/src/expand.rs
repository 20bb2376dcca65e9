//! Stage 4: code generation. Reads only the model.
//!
//! For a leaf struct the derive implements `McpArgs` (`mcp_args`: one `ArgList::push` per clap
//! argument, flattened structs delegated in place) and `McpTool` (register the leaf with its
//! `mcp_args`). Each argument's spec is emitted once: the runtime builds the input schema from
//! the list when the catalog is built and keeps the specs for the argv rebuild. A root struct
//! registers its subcommand type below a node; an enum registers one node per variant, a
//! variant leaf with its own `fn __args`. Everything sits in an anonymous `const` block and
//! reaches the runtime through `<crate>::__private`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::DeriveInput;
use syn::spanned::Spanned;

use crate::ast::{
    Arg, Container, Defaults, Field, Input, Node, Possible, Scalar, Shape, Variant, VariantKind,
};

pub(crate) fn expand(cont: &Container<'_>) -> TokenStream {
    let p = private_path(cont.original, krate(cont));
    let body = match &cont.input {
        Input::Leaf { node, fields } => leaf_struct(cont.original, &p, node, fields),
        // `#[mcp_tool(skip)]` on a root struct or an enum: the whole subtree stays out.
        Input::Root { node, .. } | Input::Branch { node, .. } if node.mcp.skip.is_some() => {
            impl_tool(cont.original, &p, quote! { let _ = __cx; })
        }
        Input::Root { node, subcommand } => {
            let node = node_expr(&p, node, false);
            impl_tool(
                cont.original,
                &p,
                quote! { __cx.node(#node, <#subcommand as #p::McpTool>::mcp_visit); },
            )
        }
        Input::Branch { node, variants } => {
            let node = node_expr(&p, node, false);
            let variants = variants.iter().map(|v| variant(&p, v));
            impl_tool(cont.original, &p, quote! { __cx.node(#node, |__cx| { #(#variants)* }); })
        }
    };
    wrap(body)
}

/// Stub impls emitted beside compile errors, so users see only the real errors.
pub(crate) fn dummy(input: &DeriveInput) -> TokenStream {
    let p = private_path(input, None);
    let mut body = impl_tool(input, &p, quote! { let _ = __cx; });
    if matches!(input.data, syn::Data::Struct(_)) {
        body.extend(impl_args(input, &p, quote! { let _ = __l; }));
    }
    wrap(body)
}

fn krate(cont: &Container<'_>) -> Option<syn::Path> {
    let node = match &cont.input {
        Input::Leaf { node, .. } | Input::Root { node, .. } | Input::Branch { node, .. } => node,
    };
    node.mcp.krate.clone()
}

fn private_path(_input: &DeriveInput, krate: Option<syn::Path>) -> TokenStream {
    match krate {
        Some(path) => quote!(#path::__private),
        None => quote!(::charly::__private),
    }
}

fn wrap(body: TokenStream) -> TokenStream {
    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_attributes, unused_qualifications, clippy::all)]
        const _: () = { #body };
    }
}

fn impl_tool(input: &DeriveInput, p: &TokenStream, visit: TokenStream) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        #[automatically_derived]
        impl #impl_generics #p::McpTool for #ident #ty_generics #where_clause {
            fn mcp_visit(__cx: &mut #p::Visitor) { #visit }
        }
    }
}

fn impl_args(input: &DeriveInput, p: &TokenStream, args: TokenStream) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        #[automatically_derived]
        impl #impl_generics #p::McpArgs for #ident #ty_generics #where_clause {
            fn mcp_args(__l: &mut #p::ArgList) { #args }
        }
    }
}

fn leaf_struct(input: &DeriveInput, p: &TokenStream, node: &Node, fields: &[Field<'_>]) -> TokenStream {
    let mut out = impl_args(input, p, args_body(p, fields));
    let visit = if node.mcp.skip.is_some() {
        quote! { let _ = __cx; }
    } else {
        let node = node_expr(p, node, true);
        quote! { __cx.leaf(#node, <Self as #p::McpArgs>::mcp_args); }
    };
    out.extend(impl_tool(input, p, visit));
    out
}

/// The body of `mcp_args` for a list of fields: each argument's spec, once.
fn args_body(p: &TokenStream, fields: &[Field<'_>]) -> TokenStream {
    let mut body = TokenStream::new();
    if fields.iter().any(|f| matches!(f, Field::Arg(_))) {
        body.extend(quote! {
            #[allow(unused_imports)]
            use #p::{ProbeBool as _, ProbeInt as _, ProbeFloat as _, ProbeChar as _, ProbeText as _,
                     ProbeValueEnum as _, ProbeNotValueEnum as _};
        });
    }
    for field in fields {
        match field {
            Field::Flatten(ty) => body.extend(quote! { <#ty as #p::McpArgs>::mcp_args(__l); }),
            Field::KeptOff(id, index) => {
                let index = opt(p, *index);
                body.extend(quote! { __l.kept_off(#id, #index); });
            }
            Field::Arg(arg) => {
                let spec = arg_expr(p, arg);
                let help = help_expr(p, arg);
                let (defaults, possible) = values_exprs(p, arg);
                body.extend(quote_spanned! {arg.span=> __l.push(#spec, #help, #defaults, #possible); });
            }
        }
    }
    body
}

fn variant(p: &TokenStream, v: &Variant<'_>) -> TokenStream {
    match &v.kind {
        VariantKind::Skip => quote! {},
        VariantKind::Flatten(ty) => quote! { <#ty as #p::McpTool>::mcp_visit(__cx); },
        VariantKind::Newtype(ty) | VariantKind::Subcommand(ty) => {
            let node = node_expr(p, &v.node, false);
            quote! { __cx.node(#node, <#ty as #p::McpTool>::mcp_visit); }
        }
        VariantKind::Leaf(fields) => {
            let node = node_expr(p, &v.node, false);
            let args = args_body(p, fields);
            quote! {{
                fn __args(__l: &mut #p::ArgList) { #args }
                __cx.leaf(#node, __args);
            }}
        }
    }
}

fn opt<T: quote::ToTokens>(p: &TokenStream, value: Option<T>) -> TokenStream {
    match value {
        Some(v) => quote!(#p::Option::Some(#v)),
        None => quote!(#p::Option::None),
    }
}

/// A `Node` literal naming only the attributes this node has (`..Node::NONE` for the rest).
fn node_expr(p: &TokenStream, node: &Node, struct_node: bool) -> TokenStream {
    let some = |field: TokenStream, value: Option<TokenStream>| {
        value.map(|v| quote!(#field: #p::Option::Some(#v),)).unwrap_or_default()
    };
    let segment = some(quote!(segment), node.segment.as_deref().map(|s| quote!(#s)));
    let name = some(quote!(name), node.mcp.name.as_ref().map(|l| l.value()).map(|n| quote!(#n)));
    let root_name = match node.root_name.as_deref() {
        _ if !struct_node => TokenStream::new(),
        Some(name) if !name.is_empty() => some(quote!(root_name), Some(quote!(#name))),
        _ => some(quote!(root_name), Some(quote!(::core::env!("CARGO_PKG_NAME")))),
    };
    let about = some(quote!(about), node.about.clone());
    let long_about = some(quote!(long_about), node.long_about.clone());
    let destructive =
        some(quote!(destructive), node.mcp.destructive.as_ref().map(|(_, reason)| quote!(#reason)));
    let idempotent = node.mcp.idempotent.map(|_| quote!(idempotent: true,));
    let open_world = node.mcp.open_world.map(|_| quote!(open_world: true,));
    // Spanned at the type, so a type without `JsonSchema` is reported where it is named.
    let output = node.mcp.output.as_ref().map(|ty| {
        let schema = quote_spanned!(ty.span()=> #p::output_schema::<#ty>);
        quote!(output: #p::Option::Some(#schema),)
    });
    quote! {
        #p::Node {
            #segment #name #root_name #about #long_about #destructive #idempotent #open_world #output
            ..#p::Node::NONE
        }
    }
}

fn arg_expr(p: &TokenStream, arg: &Arg) -> TokenStream {
    let id = &arg.id;
    // Only what differs from `Arg::BASE`.
    let long = arg.long.as_deref().map(|l| quote!(long: #p::Option::Some(#l),));
    let short = arg.short.map(|c| quote!(short: #p::Option::Some(#c),));
    let positional = arg.long.is_none() && arg.short.is_none();
    let ty = &arg.value_ty;
    let (shape, scalar) = match arg.shape {
        Shape::SetTrue => (quote!(#p::Shape::Flag(#p::FlagAction::SetTrue)), quote!(#p::Scalar::Bool)),
        Shape::SetFalse => (quote!(#p::Shape::Flag(#p::FlagAction::SetFalse)), quote!(#p::Scalar::Bool)),
        Shape::Count => (quote!(#p::Shape::Count), quote!(#p::Scalar::Int { min: 0, max: 255 })),
        Shape::Single | Shape::Many { .. } => {
            let shape = match arg.shape {
                Shape::Many { min, max } => {
                    let max = opt(p, max);
                    quote!(#p::Shape::Many { min: #min, max: #max })
                }
                _ => quote!(#p::Shape::Single),
            };
            let scalar = match arg.scalar {
                Scalar::Probe { min: None, max: None } => quote!((&&&&&#p::Probe::<#ty>::new()).scalar()),
                Scalar::Probe { min, max } => {
                    let (min, max) = (opt(p, min), opt(p, max));
                    quote!((&&&&&#p::Probe::<#ty>::new()).scalar().within(#min, #max))
                }
                Scalar::Text => quote!(#p::Scalar::String),
            };
            (shape, scalar)
        }
    };
    let positional = positional.then(|| quote!(positional: true,));
    let required = arg.required.then(|| quote!(required: true,));
    let delimiter = arg.delimiter.map(|d| quote!(delimiter: #p::Option::Some(#d),));
    let index = arg.index.map(|i| quote!(index: #p::Option::Some(#i),));
    let send_default = arg.send_default.then(|| quote!(send_default: true,));
    let value_name = arg.value_name.as_deref().map(|v| quote!(value_name: #p::Option::Some(#v),));
    quote! {
        #p::Arg {
            id: #id, #long #short #positional shape: #shape, scalar: #scalar, #required #index #delimiter
            #send_default #value_name
            ..#p::Arg::BASE
        }
    }
}

/// The `Help` of an argument, naming only the parts it has.
fn help_expr(p: &TokenStream, arg: &Arg) -> TokenStream {
    if arg.help.is_none() && arg.long_help.is_none() && arg.env.is_none() {
        return quote!(#p::Help::NONE);
    }
    let help = arg.help.as_ref().map(|h| quote!(help: #p::Option::Some(#h),));
    let long_help = arg.long_help.as_ref().map(|h| quote!(long_help: #p::Option::Some(#h),));
    let env = arg.env.as_deref().map(|e| quote!(env: #p::Option::Some(#e),));
    quote!(#p::Help { #help #long_help #env ..#p::Help::NONE })
}

/// The default texts (a `Vec<String>`) and the possible values (an `Option<Vec<String>>`).
fn values_exprs(p: &TokenStream, arg: &Arg) -> (TokenStream, TokenStream) {
    if matches!(arg.shape, Shape::SetTrue | Shape::SetFalse | Shape::Count) {
        return (quote!(#p::Vec::new()), quote!(#p::Option::None));
    }
    let ty = &arg.value_ty;
    let value_enum = matches!(arg.possible, Possible::ValueEnum);
    // clap shows a typed default with `Display`, or by its `ValueEnum` name under `value_enum`.
    let show = if value_enum {
        quote!(#p::value_enum_name(&__v))
    } else {
        quote!(#p::Option::Some(#p::ToString::to_string(&__v)))
    };
    let defaults = match &arg.defaults {
        Defaults::None => quote!(#p::Vec::new()),
        Defaults::Texts(expr, false) => quote!(::std::vec![#p::ToString::to_string(&#expr)]),
        Defaults::Texts(expr, true) => quote! {
            ::std::iter::IntoIterator::into_iter(#expr)
                .map(|__v| #p::ToString::to_string(&__v))
                .collect::<#p::Vec<#p::String>>()
        },
        Defaults::Typed(expr) => {
            let expr = expr
                .as_ref()
                .map_or_else(|| quote!(<#ty as ::core::default::Default>::default()), |e| quote!(#e));
            quote! {{
                let __v: #ty = #expr;
                #show.into_iter().collect::<#p::Vec<#p::String>>()
            }}
        }
        Defaults::TypedMany(expr) => quote! {
            ::std::iter::IntoIterator::into_iter(#expr)
                .filter_map(|__v: #ty| #show)
                .collect::<#p::Vec<#p::String>>()
        },
    };
    let possible = match &arg.possible {
        Possible::Parser(expr) => quote!(#p::parser_possible_values(#expr)),
        Possible::ValueEnum | Possible::Probe => quote!((&&#p::Probe::<#ty>::new()).possible_values()),
    };
    (defaults, possible)
}
