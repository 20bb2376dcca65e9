use super::*;
use serde_json::{Value, json};

fn read(kind: &str, spec: Value) -> (Runtime, Vec<String>) {
    let mut rt = Runtime::default();
    let mut problems = Vec::new();
    parse(kind, &spec, "web", &mut rt, &mut problems);
    (rt, problems)
}

#[test]
fn a_hook_is_one_command_or_a_list() {
    let (rt, problems) = read("hook", json!({"pre_remove": ["a", "b"], "post_enable": "c"}));
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!((rt.hooks.pre_remove, rt.hooks.post_enable), (vec!["a".into(), "b".into()], vec!["c".into()]));
    let (_, problems) = read("hook", json!({"pre_remove": ["a", ""]}));
    assert_eq!(problems.len(), 1, "{problems:?}");
}

#[test]
fn services_and_their_problems() {
    let (rt, problems) = read(
        "service",
        json!([
            {"name": "httpd", "command": "httpd -f", "env": ["A=1"]},
            {"name": "bad name", "command": ""},
            {"name": "x", "command": "y", "colour": 1},
            "loose"
        ]),
    );
    assert_eq!(rt.services.len(), 1);
    assert!(rt.services[0].autostart);
    assert_eq!(
        problems,
        [
            // Entries that are not maps are reported first, as the list is read.
            "`service[3]` is \"loose\"; each entry is a map {name, command, user, autostart, env}",
            "`service[1].name` is \"bad name\"; allowed: letters, digits, `_`, `.` and `-`",
            "`service[1].command`: \"\" is not a command: give one non-empty line",
            "unknown key `service[2].colour`; allowed: name, command, user, autostart, env",
        ]
    );
}

#[test]
fn env_merges_by_key_and_security_merges_lists() {
    let mut rt = Runtime::default();
    let mut problems = Vec::new();
    parse("env", &json!(["A=1", "B=2"]), "a", &mut rt, &mut problems);
    parse("env", &json!(["A=3", "NOEQ"]), "b", &mut rt, &mut problems);
    assert_eq!(rt.env, ["B=2", "A=3"]);
    assert_eq!(problems, ["`env[1]`: \"NOEQ\" has no `=`; write KEY=VALUE (KEY= for an empty value)"]);
    parse("security", &json!({"cap_add": ["NET_ADMIN"], "read_only": true}), "a", &mut rt, &mut problems);
    parse(
        "security",
        &json!({"cap_add": ["NET_ADMIN", "SYS_PTRACE"], "user": 1000}),
        "b",
        &mut rt,
        &mut problems,
    );
    assert_eq!(rt.security.cap_add, ["NET_ADMIN", "SYS_PTRACE"]);
    assert_eq!(rt.security.user.as_deref(), Some("1000"));
    assert_eq!(
        rt.security.run_args().join(" "),
        "--user 1000 --cap-add NET_ADMIN --cap-add SYS_PTRACE --read-only"
    );
}

#[test]
fn labels_round_trip() {
    let (mut rt, problems) = read("service", json!([{"name": "s", "command": "echo it's %d"}]));
    assert!(problems.is_empty());
    rt.hooks.pre_remove.push("true".into());
    let labels: BTreeMap<String, String> =
        rt.labels().into_iter().map(|(k, v)| (k.to_owned(), v.replace("\\u0027", "'"))).collect();
    assert_eq!(labels[label::INIT], "supervisord");
    assert_eq!(Runtime::from_labels(&labels), rt);
    assert!(rt.supervisord_conf("b").contains("command=echo it's %%d\n"));
}
