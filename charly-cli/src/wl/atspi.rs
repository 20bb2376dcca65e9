//! `atspi tree|find|click [QUERY]`: the accessibility tree through python3's
//! `gi.repository.Atspi` inside the target (REFERENCE.md §15), on the session's D-Bus
//! (`DBUS_SESSION_BUS_ADDRESS` of the session, else `unix:path=/tmp/dbus-session` as the
//! reference defaults). The script is fixed text given to `python3 -c`; the action and the
//! query are its arguments (`sys.argv`), never part of the code.

use serde_json::Value;

use super::report::WlJson;
use super::tool::Tools;
use super::{AtspiAction, WlError};

/// The interpreter.
const PYTHON: &str = "/usr/bin/python3";

/// Walks the desktop's accessibles: tree prints every node, find the nodes whose name or role
/// contains the query (both for `name:role`; lower case), click performs the first match's
/// click/press/activate action. One JSON list on stdout; exit 3 when click found nothing.
const SCRIPT: &str = r#"
import json, sys
import gi
gi.require_version('Atspi', '2.0')
from gi.repository import Atspi
action = sys.argv[1]
query = sys.argv[2].lower() if len(sys.argv) > 2 else ''
nodes = []
def walk(acc, depth):
    if acc is None or depth > 32 or len(nodes) > 5000:
        return
    try:
        entry = {'name': acc.get_name() or '', 'role': acc.get_role_name() or '', 'depth': depth}
    except Exception:
        return
    try:
        ext = acc.get_extents(Atspi.CoordType.SCREEN)
        entry.update(x=ext.x, y=ext.y, width=ext.width, height=ext.height)
    except Exception:
        pass
    names = []
    try:
        act = acc.get_action_iface()
        if act is not None:
            names = [act.get_action_name(i) for i in range(act.get_n_actions())]
    except Exception:
        pass
    entry['actions'] = names
    nodes.append((entry, acc))
    try:
        count = acc.get_child_count()
    except Exception:
        count = 0
    for i in range(count):
        try:
            walk(acc.get_child_at_index(i), depth + 1)
        except Exception:
            pass
walk(Atspi.get_desktop(0), 0)
def matches(e):
    if not query:
        return True
    name, role = e['name'].lower(), e['role'].lower()
    if ':' in query:
        q_name, q_role = query.split(':', 1)
        return q_name in name and q_role in role
    return query in name or query in role
found = [(e, a) for (e, a) in nodes if action == 'tree' or matches(e)]
if action == 'click':
    for e, acc in found:
        act = acc.get_action_iface()
        for i, n in enumerate(e['actions']):
            if n.lower() in ('click', 'press', 'activate'):
                act.do_action(i)
                print(json.dumps([dict(e, clicked=True, action=n)]))
                sys.exit(0)
    print(json.dumps([]))
    sys.exit(3)
print(json.dumps([e for (e, a) in found]))
"#;

/// Runs the script for `action` and `query`.
pub(super) async fn run(
    tools: &Tools<'_>,
    action: AtspiAction,
    query: Option<&str>,
    what: &str,
) -> Result<WlJson, WlError> {
    let word = match action {
        AtspiAction::Tree => "tree",
        AtspiAction::Find => "find",
        AtspiAction::Click => "click",
    };
    if action != AtspiAction::Tree && query.is_none_or(str::is_empty) {
        return Err(WlError::Usage(format!("atspi {word} needs a query: a name, a role, or name:role")));
    }
    // The system's python3, where python3-gi is (as the reference runs it): not whichever
    // python3 comes first on PATH.
    tools.require(PYTHON, "python3-gi and gir1.2-atspi-2.0", what)?;
    let mut argv = vec![PYTHON, "-c", SCRIPT, word];
    if let Some(q) = query {
        argv.push(q);
    }
    let ran = tools.run(&argv, None).await?;
    if ran.status == 3 {
        return Err(WlError::NoWindow(format!(
            "atspi click: no accessible matching {:?} has a click, press or activate action {}",
            query.unwrap_or_default(),
            tools.session.at()
        )));
    }
    if ran.status != 0 {
        return Err(WlError::Tool {
            tool: "python3 (Atspi)".into(),
            place: tools.session.at(),
            status: ran.status,
            stderr: ran.stderr,
        });
    }
    let items: Vec<Value> = serde_json::from_slice(&ran.stdout).map_err(|e| WlError::Tool {
        tool: "python3 (Atspi)".into(),
        place: tools.session.at(),
        status: 0,
        stderr: format!("its output is not JSON: {e}"),
    })?;
    let items = items
        .into_iter()
        .filter_map(|v| match v {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .collect();
    Ok(WlJson { what: format!("atspi.{word}"), items })
}
