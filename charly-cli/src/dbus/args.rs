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

/// The `direction="in"` argument types of `iface`'s `method` in introspection `xml` (the
/// D-Bus introspection format: `<interface name>`, `<method name>`, `<arg type direction>`;
/// a method's arguments are in unless said otherwise); `None` when the method is not there.
/// Read with regular expressions rather than an XML crate: the format is flat and fixed, and
/// the release binary has no XML parser to spare.
pub(super) fn method_in_types(xml: &str, iface: &str, method: &str) -> Option<Vec<String>> {
    let interface = regex::Regex::new(&format!(
        r#"(?s)<interface\s+name="{}"\s*>(.*?)</interface>"#,
        regex::escape(iface)
    ))
    .ok()?;
    let body = interface.captures(xml)?.get(1)?.as_str();
    let method_re = regex::Regex::new(&format!(
        r#"(?s)<method\s+name="{}"\s*(/>|>(.*?)</method>)"#,
        regex::escape(method)
    ))
    .ok()?;
    let found = method_re.captures(body)?;
    let args = found.get(2).map_or("", |m| m.as_str());
    let arg = regex::Regex::new(r"<arg\b[^>]*>").ok()?;
    let attr = regex::Regex::new(r#"(\w+)\s*=\s*"([^"]*)""#).ok()?;
    let mut types = Vec::new();
    for tag in arg.find_iter(args) {
        let attrs: HashMap<&str, &str> = attr
            .captures_iter(tag.as_str())
            .filter_map(|c| Some((c.get(1)?.as_str(), c.get(2)?.as_str())))
            .collect();
        if attrs.get("direction").is_none_or(|d| *d == "in") {
            types.push((*attrs.get("type")?).to_owned());
        }
    }
    Some(types)
}

/// A D-Bus type as `call` spells it, for messages: `string (s)`, `the D-Bus type a{sv}`.
fn spelled(signature: &str) -> String {
    let word = match signature {
        "s" => "string",
        "u" => "uint32",
        "i" => "int32",
        "x" => "int64",
        "t" => "uint64",
        "b" => "boolean",
        "d" => "double",
        "y" => "byte",
        "o" => "objpath",
        "v" => "variant",
        _ => return format!("the D-Bus type {signature}"),
    };
    format!("{word} ({signature})")
}

/// `values` (parsed from `args`) checked against the method's in-types `wanted`: their count,
/// and each one's type (a `variant` place takes any value, wrapped).
///
/// # Errors
///
/// [`DbusError::Usage`] naming the argument, the type the method takes there and the one given.
pub(super) fn check_against(
    member: &str,
    wanted: &[String],
    args: &[String],
    values: &mut [Value<'static>],
) -> Result<(), DbusError> {
    let signature = format!("({})", wanted.concat());
    if wanted.len() != values.len() {
        return Err(DbusError::Usage(format!(
            "{member} takes {} argument{} {signature}, got {}",
            wanted.len(),
            if wanted.len() == 1 { "" } else { "s" },
            values.len()
        )));
    }
    for (i, ((want, value), arg)) in wanted.iter().zip(values.iter_mut()).zip(args).enumerate() {
        let got = value.value_signature().to_string();
        if *want == got {
            continue;
        }
        if want == "v" {
            *value = Value::Value(Box::new(std::mem::replace(value, Value::U8(0))));
            continue;
        }
        return Err(DbusError::Usage(format!(
            "argument {} {arg:?} of {member}: the method takes {} there, this is {}; its arguments are \
             {signature} (types: {ARG_TYPES})",
            i + 1,
            spelled(want),
            spelled(&got)
        )));
    }
    Ok(())
}
