//! Field types sorted the way clap_derive sorts them (clap_derive `utils/ty.rs`): by the last
//! path segment, so `Option`, `std::option::Option` and `Vec` behave as clap expects.

use syn::{GenericArgument, PathArguments, Type};

/// The shape of a field's type.
pub(crate) enum Ty<'a> {
    /// `bool`.
    Bool,
    /// `Option<T>`.
    Option(&'a Type),
    /// `Vec<T>`.
    Vec(&'a Type),
    /// `Option<Vec<T>>`.
    OptionVec(&'a Type),
    /// Any other path type: one value that clap parses.
    Other(&'a Type),
}

/// Why a type has no MCP schema.
pub(crate) struct Untypable(pub(crate) &'static str);

impl<'a> Ty<'a> {
    /// The shape of `ty`. With `text` (an explicit `value_parser = ..`, which reads each value
    /// from text), one value may be of any type the parser returns, a tuple included.
    pub(crate) fn from_type(ty: &'a Type, text: bool) -> Result<Self, Untypable> {
        let ty = peel(ty);
        if is_simple(ty, "bool") {
            return Ok(Ty::Bool);
        }
        if let Some(inner) = generic_arg(ty, "Option") {
            if generic_arg(peel(inner), "Option").is_some() {
                return Err(Untypable(
                    "`Option<Option<T>>` (a flag with an optional value) has no single JSON type; use \
                     `Option<T>` (with `default_missing_value` for the bare flag)",
                ));
            }
            if let Some(inner) = generic_arg(peel(inner), "Vec") {
                check_scalar(inner, text)?;
                return Ok(Ty::OptionVec(peel(inner)));
            }
            check_scalar(inner, text)?;
            return Ok(Ty::Option(peel(inner)));
        }
        if let Some(inner) = generic_arg(ty, "Vec") {
            check_scalar(inner, text)?;
            return Ok(Ty::Vec(peel(inner)));
        }
        check_scalar(ty, text)?;
        Ok(Ty::Other(ty))
    }
}

/// A type that can be one value on the command line: a path type, not a collection of values;
/// with `text` (an explicit parser) also a tuple or an array, which the parser builds from one
/// text (clap's `Vec<(String, i32)>` with a `key=value` parser).
fn check_scalar(ty: &Type, text: bool) -> Result<(), Untypable> {
    match peel(ty) {
        Type::Path(_)
            if generic_arg(peel(ty), "Vec").is_some() || generic_arg(peel(ty), "Option").is_some() =>
        {
            Err(Untypable("nested `Vec`/`Option` values have no single JSON type; use a flat `Vec<T>`"))
        }
        Type::Path(_) => Ok(()),
        Type::Tuple(_) | Type::Array(_) if text => Ok(()),
        Type::Tuple(_) => Err(Untypable(
            "tuple fields have no JSON type; use one field per value, or parse each value from its \
             text with an explicit `value_parser = ..` (then each value is a JSON string)",
        )),
        Type::Reference(_) => {
            Err(Untypable("reference fields cannot be parsed by clap; use an owned type such as `String`"))
        }
        Type::Array(_) | Type::Slice(_) => Err(Untypable("use `Vec<T>` for a list of values")),
        _ => Err(Untypable("this field type has no JSON type")),
    }
}

fn peel(ty: &Type) -> &Type {
    match ty {
        Type::Group(g) => peel(&g.elem),
        Type::Paren(p) => peel(&p.elem),
        ty => ty,
    }
}

fn is_simple(ty: &Type, name: &str) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident(name))
}

/// `T` in `Name<T>` (matching the last path segment, as clap does).
fn generic_arg<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    let Type::Path(p) = ty else { return None };
    let segment = p.path.segments.last()?;
    if segment.ident != name {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &segment.arguments else { return None };
    match args.args.first()? {
        GenericArgument::Type(t) if args.args.len() == 1 => Some(t),
        _ => None,
    }
}
