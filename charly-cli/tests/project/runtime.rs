use charly_cli::project::runtime::{Runtime, label};
use serde_json::json;

use crate::util::{Fixture, err_text};

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({snapshot_path => concat!(env!("CARGO_MANIFEST_DIR"), "/../snapshots"), prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, text);
    });
}

const PROJECT: &str = "\
project: {version: 1}
web:
  box:
    base: docker.io/library/debian:13
    candy: [httpd, tools]
";

const HTTPD: &str = "\
httpd:
  candy:
    description: a web server under supervisord
    distro:
      \"debian,ubuntu\": {package: [supervisor, busybox]}
httpd-port:
  port: [8080]
httpd-svc:
  service:
    - name: httpd
      command: busybox httpd -f -p 8080 -h /srv/www
      env: [GREETING=it's 100% \"ok\"]
    - {name: ticker, command: sh -c 'while sleep 5; do date; done', user: nobody, autostart: false}
httpd-volume:
  volume: [{name: www, path: /srv/www}]
httpd-env:
  env: [LANG=C.UTF-8, MODE=dev]
httpd-route:
  route: [{host: web.localhost, port: 8080}]
httpd-data:
  data: [{volume: www, source: site, dest: html}]
httpd-hook:
  hook: {pre_remove: 'echo bye', post_enable: 'echo hello'}
httpd-security:
  security: {cap_drop: [ALL], cap_add: [NET_BIND_SERVICE], no_new_privileges: true, tmpfs: [/tmp]}
";

const TOOLS: &str = "\
tools:
  candy: {}
tools-env:
  env: [MODE=prod]
tools-alias:
  alias: [{name: web-logs, command: tail -n 20 /var/log/web.log}]
tools-security:
  security: {cap_add: [NET_BIND_SERVICE, NET_RAW], read_only: true, user: '1000:1000'}
";

fn web() -> Fixture {
    Fixture::with(&[
        ("charly.yml", PROJECT),
        ("candy/httpd/charly.yml", HTTPD),
        ("candy/httpd/site/index.html", "<h1>seeded</h1>\n"),
        ("candy/tools/charly.yml", TOOLS),
    ])
}

#[test]
fn generate_bakes_every_deploy_field_into_labels_and_writes_supervisord_conf() {
    let f = web();
    assert_eq!(f.project.validate().unwrap().problems, vec![]);
    f.project.generate("web").unwrap();
    let containerfile = f.read(".build/web/Containerfile");
    snapshot("containerfile_deploy_fields", &containerfile);
    snapshot("supervisord_conf_deploy_fields", &f.read(".build/web/supervisord.conf"));
    // Each label is JSON that reads back as what the candies declare, merged.
    let labels: std::collections::BTreeMap<String, String> = containerfile
        .lines()
        .filter_map(|l| l.strip_prefix("LABEL "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.trim_matches(['\'', '"']).replace("\\u0027", "'")))
        .collect();
    assert_eq!(labels[label::INIT], "supervisord");
    let rt = Runtime::from_labels(&labels);
    assert_eq!(rt.services.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["httpd", "ticker"]);
    assert!(!rt.services[1].autostart);
    assert_eq!(rt.env, ["LANG=C.UTF-8", "MODE=prod"], "a later candy's value wins");
    assert_eq!(rt.security.cap_add, ["NET_BIND_SERVICE", "NET_RAW"]);
    assert_eq!(rt.security.read_only, Some(true));
    assert_eq!(rt.data[0].staging, "/usr/share/charly/data/httpd/0");
    assert_eq!(rt.routes[0].path, "/");
    assert_eq!(rt.hooks.pre_remove, ["echo bye"]);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&labels[label::PORT]).unwrap(), json!([8080]));
    // `charly alias install` reads the alias label as {name, command}.
    let aliases: serde_json::Value = serde_json::from_str(&labels[label::ALIAS]).unwrap();
    assert_eq!(aliases[0]["name"], "web-logs");
    assert_eq!(aliases[0]["command"], "tail -n 20 /var/log/web.log");
}

#[test]
fn the_list_leaves_show_each_candys_declarations() {
    let f = web();
    let p = &f.project;
    assert_eq!(
        p.list_services().unwrap().to_string(),
        "httpd\tbusybox httpd -f -p 8080 -h /srv/www\thttpd\nticker\tsh -c 'while sleep 5; do date; done'\thttpd\n"
    );
    assert_eq!(p.list_volumes().unwrap().to_string(), "www\t/srv/www\thttpd\n");
    assert_eq!(p.list_routes().unwrap().to_string(), "web.localhost\t/\t8080\thttpd\n");
    assert_eq!(p.list_aliases().unwrap().to_string(), "web-logs\ttail -n 20 /var/log/web.log\ttools\n");
    let json = serde_json::to_value(p.list_volumes().unwrap()).unwrap();
    assert_eq!(json, json!({"volumes": [{"name": "www", "path": "/srv/www", "candy": "httpd"}]}));
    assert_eq!(
        p.list_targets().unwrap().to_string(),
        "web\tlocalhost/web:latest\tdocker.io/library/debian:13\n"
    );
}

#[test]
fn targets_put_a_box_after_the_box_its_base_is() {
    let f = Fixture::with(&[(
        "charly.yml",
        "project: {version: 1}\napp:\n  box: {base: localhost/base}\nbase:\n  box: {base: docker.io/library/debian:13}\nother:\n  box: {base: localhost/app:latest}\n",
    )]);
    let targets = f.project.list_targets().unwrap();
    let names: Vec<&str> = targets.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["base", "app", "other"]);
    assert_eq!(targets.targets[1].after.as_deref(), Some("base"));
}

#[test]
fn every_deploy_field_problem_names_file_key_path_and_what_is_allowed() {
    let f = Fixture::with(&[
        ("charly.yml", "project: {version: 1}\nweb:\n  box: {base: x, candy: [bad, dup]}\nstray:\n  env: [A=1]\n"),
        (
            "candy/bad/charly.yml",
            "\
bad:
  candy: {}
bad-svc:
  service:
    - {name: 'no spaces', command: x}
    - {name: ok, command: '', autostart: maybe, user: 'root;x'}
    - {name: x, command: x, restart: always}
    - {name: dup, command: x}
bad-vol:
  volume: [{name: -v, path: relative}, {name: data}]
bad-env:
  env: [NOEQ, 1A=x]
bad-alias:
  alias: [{name: ../x, command: ls}]
bad-route:
  route: [{host: 'not a host', port: 0, path: x}]
bad-data:
  data: [{volume: nowhere, source: ../etc}, {volume: data, source: missing}]
bad-hook:
  hook: {pre_remove: 'a', on_start: 'b'}
bad-sec:
  security: {cap_add: [cap_net_admin], shm_size: lots, tmpfs: [tmp], read_only: yes-please, devices: [/etc/passwd]}
",
        ),
        ("candy/dup/charly.yml", "dup:\n  candy: {}\ndup-svc:\n  service: [{name: dup, command: y}]\n"),
    ]);
    let lines: Vec<String> = f.project.validate().unwrap().problems.iter().map(ToString::to_string).collect();
    let expected = [
        "charly.yml: node `stray`: a `env:` node belongs in a candy's file (candy/<name>/charly.yml), where the candy's boxes pick it up",
        "candy/bad/charly.yml: node `bad-svc`: `service[0].name` is \"no spaces\"; allowed: letters, digits, `_`, `.` and `-`",
        "candy/bad/charly.yml: node `bad-svc`: `service[1].command`: \"\" is not a command: give one non-empty line",
        "candy/bad/charly.yml: node `bad-svc`: `service[1].user` is \"root;x\"; allowed: a user name, UID, or USER:GROUP / UID:GID",
        "candy/bad/charly.yml: node `bad-svc`: `service[1].autostart` is \"maybe\"; allowed: true, false",
        "candy/bad/charly.yml: node `bad-svc`: unknown key `service[2].restart`; allowed: name, command, user, autostart, env",
        "candy/bad/charly.yml: node `bad-vol`: `volume[0].name` is \"-v\"; allowed: a letter or digit, then letters, digits, `_`, `.`, `-`",
        "candy/bad/charly.yml: node `bad-vol`: `volume[0].path` is \"relative\"; allowed: an absolute path (starting with `/`, no `..`, `:` or `,`)",
        "candy/bad/charly.yml: node `bad-vol`: `volume[1].path` is missing; give the absolute path in the container",
        "candy/bad/charly.yml: node `bad-env`: `env[0]`: \"NOEQ\" has no `=`; write KEY=VALUE (KEY= for an empty value)",
        "candy/bad/charly.yml: node `bad-env`: `env[1]`: \"1A\" is not a variable name (letters, digits and `_`, not starting with a digit)",
        "candy/bad/charly.yml: node `bad-alias`: `alias[0].name`: invalid alias name \"../x\": use letters, digits and `._+-` (no `/`, spaces or shell characters), not starting with `.` or `-`",
        "candy/bad/charly.yml: node `bad-route`: `route[0].host` is \"not a host\"; allowed: a host name: letters, digits, `-` and `.`",
        "candy/bad/charly.yml: node `bad-route`: `route[0].port` is 0; allowed: a container port, 1 to 65535",
        "candy/bad/charly.yml: node `bad-route`: `route[0].path` is \"x\"; allowed: a URL path starting with `/`, no spaces",
        "candy/bad/charly.yml: node `bad-data`: `data[0].source` is \"../etc\"; allowed: a relative path inside the candy's directory (no leading `/`, no `..`, no spaces)",
        "candy/bad/charly.yml: node `bad-hook`: unknown key `hook.on_start`; allowed: pre_remove, post_enable",
        "candy/bad/charly.yml: node `bad-sec`: `security.cap_add[0]` is \"cap_net_admin\"; allowed: a capability name in upper case without CAP_ (NET_ADMIN, SYS_PTRACE, ALL)",
        "candy/bad/charly.yml: node `bad-sec`: `security.read_only` is \"yes-please\"; allowed: true, false",
        "candy/bad/charly.yml: node `bad-sec`: `security.shm_size` is \"lots\"; allowed: a size: a number with an optional unit b, k, m or g (64m)",
        "candy/bad/charly.yml: node `bad-sec`: `security.tmpfs[0]` is \"tmp\"; allowed: an absolute path (starting with `/`, no `..`, `:` or `,`)",
        "candy/bad/charly.yml: node `bad-sec`: `security.devices[0]` is \"/etc/passwd\"; allowed: a host device /dev/NAME[:CONTAINER_PATH[:rwm]]",
        "charly.yml: node `web`: service `dup` is declared by candy `bad` and again by candy `dup`; rename one",
        "charly.yml: node `web`: candy `bad` seeds volume `data`, which no candy of the box declares (volumes: none); add a `volume:` node with it",
        "candy/bad/charly.yml: node `bad-data`: `data` source \"missing\" (for volume `data`) is not in the candy's directory (candy/bad/missing); create it, or name a file or directory there",
    ];
    for line in &lines {
        println!("{line}");
    }
    assert_eq!(lines, expected);
    // generate refuses the box and writes nothing.
    let err = err_text(f.project.generate("web"));
    assert!(err.starts_with("the project has "), "{err}");
    assert!(err.contains("`service[1].command`"), "{err}");
    assert!(!f.path(".build/web/Containerfile").exists());
}

#[test]
fn a_check_node_with_a_verb_named_like_a_kind_is_a_check() {
    let f = Fixture::with(&[
        ("charly.yml", "project: {version: 1}\n"),
        (
            "candy/c/charly.yml",
            "c:\n  candy: {}\nc-svc-up:\n  check: the service runs\n  service: httpd\n  running: true\n",
        ),
    ]);
    let validation = f.project.validate().unwrap();
    assert!(
        validation.problems.iter().all(|p| !p.message.contains("several kind keys")),
        "{:?}",
        validation.problems
    );
    assert_eq!(f.project.list_checks().unwrap().checks.len(), 1);
}

/// A box node's own `env:` and `security:` (charly.yml) apply over its candies': env by key,
/// security as a later candy's; a bad value is a problem of the box node.
#[test]
fn a_box_declares_its_own_env_and_security() {
    let project = "project: {version: 1}\nweb:\n  box:\n    base: docker.io/library/debian:13\n    candy: [httpd, tools]\n    env: [MODE=box, EXTRA=1]\n    security: {cap_drop: [NET_RAW], read_only: false}\n";
    let f = Fixture::with(&[
        ("charly.yml", project),
        ("candy/httpd/charly.yml", HTTPD),
        ("candy/httpd/site/index.html", "<h1>seeded</h1>\n"),
        ("candy/tools/charly.yml", TOOLS),
    ]);
    assert_eq!(f.project.validate().unwrap().problems, vec![]);
    let rt = f.project.resolve_box("web").unwrap().runtime();
    assert_eq!(rt.env, ["LANG=C.UTF-8", "MODE=box", "EXTRA=1"]);
    assert_eq!(rt.security.cap_drop, ["ALL", "NET_RAW"]);
    assert_eq!(rt.security.read_only, Some(false), "the box's scalar wins");
    f.project.generate("web").unwrap();
    let containerfile = f.read(".build/web/Containerfile");
    assert!(
        containerfile.contains(r#"LABEL ai.opencharly.env='["LANG=C.UTF-8","MODE=box","EXTRA=1"]'"#),
        "{containerfile}"
    );

    let bad = "project: {version: 1}\nweb:\n  box:\n    base: docker.io/library/debian:13\n    env: [NOEQUALS]\n    security: {cap_add: [bad cap]}\n";
    let f = Fixture::with(&[("charly.yml", bad)]);
    let problems: Vec<String> =
        f.project.validate().unwrap().problems.iter().map(|p| p.to_string()).collect();
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(problems[0].contains("node `web`") && problems[0].contains("env[0]"), "{problems:#?}");
    assert!(problems[1].contains("cap_add"), "{problems:#?}");
}
