//! The typed arguments of `check.dbus.call`: `type:value`, and `array:`/`dict:` of basic types
//! as dbus-send spells them.

use std::collections::HashMap;

use zbus::zvariant::{self, Value};

use super::DbusError;

/// The argument types `call` takes, for messages.
pub const ARG_TYPES: &str = "string, uint32, int32, int64, uint64, boolean (bool), double, byte, objpath; \
     array:TYPE:a,b,... and dict:KEYTYPE:VALUETYPE:k1,v1,k2,v2,... of those (as dbus-send spells them)";

/// A basic D-Bus type as text: parsed from a `type:value` argument.
trait Scalar: Sized + zvariant::Type + Into<Value<'static>> {
    /// What the text must be, for messages.
    const WHAT: &'static str;
    fn parse(text: &str) -> Option<Self>;
}

macro_rules! scalar {
    ($t:ty, $what:literal) => {
        impl Scalar for $t {
            const WHAT: &'static str = $what;
            fn parse(text: &str) -> Option<Self> {
                text.parse().ok()
            }
        }
    };
}
scalar!(String, "a string");
scalar!(u8, "a byte (0 to 255)");
scalar!(u32, "a uint32 (0 to 4294967295)");
scalar!(i32, "an int32");
scalar!(i64, "an int64");
scalar!(u64, "a uint64");
scalar!(bool, "true or false");
scalar!(f64, "a double");

impl Scalar for zvariant::OwnedObjectPath {
    const WHAT: &'static str = "an object path (/a/b)";
    fn parse(text: &str) -> Option<Self> {
        zvariant::OwnedObjectPath::try_from(text.to_owned()).ok()
    }
}

fn one<T: Scalar>(arg: &str, text: &str) -> Result<T, DbusError> {
    T::parse(text).ok_or_else(|| DbusError::Usage(format!("argument {arg:?}: {text:?} is not {}", T::WHAT)))
}

/// The items of an array or dict: comma-separated, none for empty text.
fn items(text: &str) -> Vec<&str> {
    if text.is_empty() { Vec::new() } else { text.split(',').collect() }
}

fn unknown(arg: &str, ty: &str) -> DbusError {
    DbusError::Usage(format!("argument {arg:?}: unknown type {ty:?} (types: {ARG_TYPES})"))
}

fn array_of<T: Scalar>(arg: &str, text: &str) -> Result<Value<'static>, DbusError> {
    let v = items(text).into_iter().map(|t| one::<T>(arg, t)).collect::<Result<Vec<T>, _>>()?;
    Ok(Value::from(v))
}

fn dict_of<K, V>(arg: &str, text: &str) -> Result<Value<'static>, DbusError>
where
    K: Scalar + std::hash::Hash + Eq,
    V: Scalar,
{
    let parts = items(text);
    if !parts.len().is_multiple_of(2) {
        return Err(DbusError::Usage(format!(
            "argument {arg:?}: a dict needs key,value pairs (k1,v1,k2,v2,...), got {} items",
            parts.len()
        )));
    }
    let mut map = HashMap::new();
    for pair in parts.chunks(2) {
        let key = one::<K>(arg, pair[0])?;
        if map.insert(key, one::<V>(arg, pair[1])?).is_some() {
            return Err(DbusError::Usage(format!("argument {arg:?}: key {:?} appears twice", pair[0])));
        }
    }
    Ok(Value::from(map))
}

/// Dispatches on a hashable element type name: `$f::<T>($arg, $text)` (callers take `double`
/// first where it is allowed).
macro_rules! by_type {
    ($ty:expr, $arg:expr, $text:expr, $f:ident $(, $pre:ty)*) => {
        match $ty {
            "string" => $f::<$($pre,)* String>($arg, $text),
            "objpath" => $f::<$($pre,)* zvariant::OwnedObjectPath>($arg, $text),
            "byte" => $f::<$($pre,)* u8>($arg, $text),
            "uint32" => $f::<$($pre,)* u32>($arg, $text),
            "int32" => $f::<$($pre,)* i32>($arg, $text),
            "int64" => $f::<$($pre,)* i64>($arg, $text),
            "uint64" => $f::<$($pre,)* u64>($arg, $text),
            "boolean" | "bool" => $f::<$($pre,)* bool>($arg, $text),
            "double" => Err(DbusError::Usage(format!(
                "argument {:?}: a dict key cannot be a double (D-Bus keys are basic, hashable types)",
                $arg
            ))),
            other => Err(unknown($arg, other)),
        }
    };
}

fn dict_keyed<K: Scalar + std::hash::Hash + Eq>(
    arg: &str,
    rest: (&str, &str),
) -> Result<Value<'static>, DbusError> {
    match rest {
        ("double", text) => dict_of::<K, f64>(arg, text),
        (vty, text) => by_type!(vty, arg, text, dict_of, K),
    }
}

/// `type:value` as a D-Bus value: a basic type, `array:TYPE:a,b,...` or
/// `dict:KEYTYPE:VALUETYPE:k1,v1,...` (items split at commas, as dbus-send does).
///
/// # Errors
///
/// [`DbusError::Usage`] naming the argument, the type and what is allowed.
pub fn parse_arg(arg: &str) -> Result<Value<'static>, DbusError> {
    let Some((ty, text)) = arg.split_once(':') else {
        return Err(DbusError::Usage(format!("argument {arg:?}: expects type:value (types: {ARG_TYPES})")));
    };
    let shape = |what: &str| DbusError::Usage(format!("argument {arg:?}: expects {what}"));
    match ty {
        "array" => {
            let (ety, items) = text.split_once(':').ok_or_else(|| shape("array:TYPE:a,b,..."))?;
            if ety == "array" || ety == "dict" {
                return Err(shape("an array of a basic type (nested arrays and dicts are not spelled here)"));
            }
            match ety {
                "double" => array_of::<f64>(arg, items),
                _ => by_type!(ety, arg, items, array_of),
            }
        }
        "dict" => {
            let (kty, rest) =
                text.split_once(':').ok_or_else(|| shape("dict:KEYTYPE:VALUETYPE:k1,v1,..."))?;
            let rest = rest.split_once(':').ok_or_else(|| shape("dict:KEYTYPE:VALUETYPE:k1,v1,..."))?;
            by_type!(kty, arg, rest, dict_keyed)
        }
        "string" => Ok(Value::from(text.to_owned())),
        "objpath" => Ok(Value::from(one::<zvariant::OwnedObjectPath>(arg, text)?)),
        "byte" => Ok(Value::U8(one(arg, text)?)),
        "uint32" => Ok(Value::U32(one(arg, text)?)),
        "int32" => Ok(Value::I32(one(arg, text)?)),
        "int64" => Ok(Value::I64(one(arg, text)?)),
        "uint64" => Ok(Value::U64(one(arg, text)?)),
        "boolean" | "bool" => Ok(Value::Bool(one(arg, text)?)),
        "double" => Ok(Value::F64(one(arg, text)?)),
        other => Err(unknown(arg, other)),
    }
}
