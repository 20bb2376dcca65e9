//! Editing Codex's `config.toml` in place with `toml_edit` (the TOML editor cargo itself uses):
//! comments, key order and formatting of everything else stay as they are.

use serde_json::{Map, Value};
use toml_edit::{DocumentMut, Item, Table};

use super::entry::stale_keys;
use super::jsonc::JsonProblem;

fn parse(text: &str) -> Result<DocumentMut, JsonProblem> {
    text.parse::<DocumentMut>().map_err(|e| JsonProblem::Parse(e.to_string().trim().to_owned()))
}

/// A JSON value (strings, booleans, numbers, arrays of them) as a TOML value.
fn toml_value(value: &Value) -> toml_edit::Value {
    match value {
        Value::String(s) => s.as_str().into(),
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => n.as_i64().map_or_else(|| n.as_f64().unwrap_or_default().into(), Into::into),
        Value::Array(items) => toml_edit::Value::Array(items.iter().map(toml_value).collect()),
        Value::Object(map) => {
            let mut table = toml_edit::InlineTable::new();
            for (k, v) in map {
                table.insert(k, toml_value(v));
            }
            toml_edit::Value::InlineTable(table)
        }
        Value::Null => "".into(),
    }
}

/// A TOML item as JSON, for comparing and reporting.
fn json_of(item: &Item) -> Option<Value> {
    match item {
        Item::Value(v) => Some(value_json(v)),
        Item::Table(t) => {
            Some(Value::Object(t.iter().filter_map(|(k, v)| Some((k.to_owned(), json_of(v)?))).collect()))
        }
        _ => None,
    }
}

fn value_json(value: &toml_edit::Value) -> Value {
    match value {
        toml_edit::Value::String(s) => Value::String(s.value().clone()),
        toml_edit::Value::Integer(i) => Value::from(*i.value()),
        toml_edit::Value::Float(f) => Value::from(*f.value()),
        toml_edit::Value::Boolean(b) => Value::Bool(*b.value()),
        toml_edit::Value::Datetime(d) => Value::String(d.value().to_string()),
        toml_edit::Value::Array(a) => Value::Array(a.iter().map(value_json).collect()),
        toml_edit::Value::InlineTable(t) => {
            Value::Object(t.iter().map(|(k, v)| (k.to_owned(), value_json(v))).collect())
        }
    }
}

/// The `mcp_servers` table, made (as an implicit table, so only `[mcp_servers.<name>]` headers
/// appear) when `create`.
fn servers(doc: &mut DocumentMut, create: bool) -> Result<Option<&mut Table>, JsonProblem> {
    if !doc.contains_key("mcp_servers") {
        if !create {
            return Ok(None);
        }
        let mut table = Table::new();
        table.set_implicit(true);
        doc.insert("mcp_servers", Item::Table(table));
    }
    match doc.get_mut("mcp_servers") {
        Some(Item::Table(table)) => Ok(Some(table)),
        _ => Err(JsonProblem::NotAnObject("`mcp_servers` (a table)".into())),
    }
}

/// `text` with `[mcp_servers.<name>]` holding `entry`'s keys; other keys of an existing table
/// (`env`, `startup_timeout_sec`, ...) and their comments stay.
pub(crate) fn upsert(text: &str, name: &str, entry: &Map<String, Value>) -> Result<String, JsonProblem> {
    let mut doc = parse(text)?;
    let servers = servers(&mut doc, true)?.expect("created");
    if !matches!(servers.get(name), None | Some(Item::Table(_))) {
        return Err(JsonProblem::NotAnObject(format!("`mcp_servers.{name}` (a table)")));
    }
    let table =
        servers.entry(name).or_insert_with(|| Item::Table(Table::new())).as_table_mut().expect("a table");
    for (k, v) in entry {
        if table.get(k).and_then(json_of).as_ref() != Some(v) {
            table.insert(k, Item::Value(toml_value(v)));
        }
    }
    for stale in stale_keys(entry) {
        table.remove(stale);
    }
    Ok(doc.to_string())
}

/// `text` without `[mcp_servers.<name>]`; `None` when there is none.
pub(crate) fn remove(text: &str, name: &str) -> Result<Option<String>, JsonProblem> {
    let mut doc = parse(text)?;
    let Some(servers) = servers(&mut doc, false)? else { return Ok(None) };
    if servers.remove(name).is_none() {
        return Ok(None);
    }
    Ok(Some(doc.to_string()))
}

/// The table `mcp_servers.<name>` as JSON.
pub(crate) fn get(text: &str, name: &str) -> Option<Value> {
    let doc = text.parse::<DocumentMut>().ok()?;
    json_of(doc.get("mcp_servers")?.get(name)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn comments_and_other_tables_stay() {
        let text = "# codex settings\nmodel = \"o3\" # mine\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let entry = json!({"command": "/bin/charly", "args": ["mcp", "serve", "--stdio"]});
        let out = upsert(text, "charly", entry.as_object().unwrap()).unwrap();
        assert_eq!(
            out,
            "# codex settings\nmodel = \"o3\" # mine\n\n[mcp_servers.other]\ncommand = \"x\"\n\n\
             [mcp_servers.charly]\ncommand = \"/bin/charly\"\nargs = [\"mcp\", \"serve\", \"--stdio\"]\n"
        );
        assert_eq!(upsert(&out, "charly", entry.as_object().unwrap()).unwrap(), out);
        assert_eq!(get(&out, "charly").unwrap(), entry);
        assert_eq!(remove(&out, "charly").unwrap().unwrap(), text);
        assert_eq!(remove(text, "charly").unwrap(), None);
    }

    #[test]
    fn a_new_file_gets_only_the_servers_table() {
        let out = upsert(
            "",
            "charly",
            json!({"url": "http://x/mcp", "bearer_token_env_var": "T"}).as_object().unwrap(),
        )
        .unwrap();
        assert_eq!(out, "[mcp_servers.charly]\nurl = \"http://x/mcp\"\nbearer_token_env_var = \"T\"\n");
        assert!(matches!(upsert("mcp_servers = 1", "c", &Map::new()), Err(JsonProblem::NotAnObject(_))));
        assert!(matches!(upsert("[x", "c", &Map::new()), Err(JsonProblem::Parse(_))));
    }

    #[test]
    fn switching_to_http_drops_the_stdio_only_keys_codex_refuses() {
        let text = "[mcp_servers.charly]\ncommand = \"charly\"\nargs = [\"mcp\"]\ncwd = \"/p\"\nstartup_timeout_sec = 20\n\n[mcp_servers.charly.env]\nA = \"1\"\n";
        let http = json!({"url": "http://x/mcp", "bearer_token_env_var": "T"});
        let out = upsert(text, "charly", http.as_object().unwrap()).unwrap();
        assert!(!out.contains("charly.env]") && !out.contains("A = ") && !out.contains("cwd"), "{out}");
        assert!(!out.contains("command"), "{out}");
        assert!(out.contains("startup_timeout_sec = 20") && out.contains("url = \"http://x/mcp\""), "{out}");
        // Back to stdio: nothing of the user's is lost that an HTTP entry could keep.
        let stdio = json!({"command": "/bin/charly", "args": ["mcp", "serve", "--stdio"]});
        let back = upsert(&out, "charly", stdio.as_object().unwrap()).unwrap();
        assert!(back.contains("startup_timeout_sec = 20") && !back.contains("url"), "{back}");
    }
}
