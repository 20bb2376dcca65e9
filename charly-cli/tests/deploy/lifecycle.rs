use crate::util::{Box, container_exists, free_port, http_get, volume_exists};

const HTTPD: [&str; 8] = ["--", "httpd", "-f", "-v", "-p", "80", "-h", "/www"];

#[test]
fn start_status_logs_stop_start_remove() {
    let b = Box::built("test-life");
    let port = free_port();
    let publish = format!("{port}:80");
    let mut start = vec!["start", "test-life", "--port", &publish, "--json"];
    start.extend(HTTPD);
    let started = b.run(&start);
    started.status(0);
    let json = started.json();
    assert_eq!(json["container"], "charly-test-life");
    assert_eq!(json["image"], "localhost/test-life:latest");
    assert_eq!(json["ports"][0]["host"], port);
    assert_eq!(json["ports"][0]["host_ip"], "127.0.0.1");
    assert_eq!(json["replaced_exited"], false);
    assert!(http_get(port).contains("hello from busybox httpd"));

    let status = b.run(&["status", "test-life", "--json"]);
    status.status(0);
    let c = &status.json()["containers"][0];
    assert_eq!(c["container"], "charly-test-life");
    assert_eq!(c["status"], "running");
    assert_eq!(c["box"], "test-life");
    assert_eq!(c["probes"][0]["name"], "port");
    assert_eq!(c["probes"][0]["status"], "ok", "{}", status.dump());
    // The table of every charly container (other tests' too) has this one's row.
    let table = b.run(&["status"]);
    table.status(0);
    assert!(table.stdout.starts_with("CONTAINER "), "{}", table.dump());
    let row = table
        .stdout
        .lines()
        .find(|l| l.starts_with("charly-test-life "))
        .unwrap_or_else(|| panic!("{}", table.dump()));
    assert!(
        row.contains(" running ")
            && row.contains(&format!("{port}->80"))
            && row.ends_with(&format!("port:{port} ok")),
        "{row}"
    );

    // httpd -v logs each response on stderr; the tool returns it among the last lines.
    let logs = b.run(&["logs", "test-life", "--lines", "5", "--json"]);
    logs.status(0);
    let lines = logs.json()["lines"].as_array().unwrap().clone();
    assert!(lines.iter().any(|l| l.as_str().unwrap().contains("response:200")), "{}", logs.dump());

    let stopped = b.run(&["stop", "test-life", "--timeout", "5"]);
    stopped.status(0);
    assert_eq!(stopped.stdout, "stopped charly-test-life\n");
    // Under the init, httpd stops on SIGTERM: no waiting for the timeout.
    assert!(stopped.took.as_secs() < 4, "{}", stopped.dump());
    let status = b.run(&["status", "test-life", "--json"]).json();
    assert!(status["containers"][0]["status"].as_str().unwrap().starts_with("exited"), "{status}");
    assert_eq!(status["containers"][0]["probes"], serde_json::json!([]));

    // An exited container of the same name is replaced.
    let again = b.run(&start);
    again.status(0);
    assert_eq!(again.json()["replaced_exited"], true);

    let removed = b.run(&["remove", "test-life"]);
    removed.status(0);
    assert_eq!(removed.stdout, "removed container charly-test-life\n");
    assert!(!container_exists("charly-test-life"));
    b.run(&["remove", "test-life"]).status(0);
    let status = b.run(&["status", "test-life"]);
    status.status(0);
    assert_eq!(status.stdout, "box test-life has no container (start it with `charly start test-life`)\n");
}

#[test]
fn update_rebuilds_and_recreates_with_the_same_arguments() {
    let b = Box::built("test-upd");
    let port = free_port();
    let publish = format!("{port}:80");
    let mut start = vec!["start", "test-upd", "--env", "GREETING=hi there", "--port", &publish, "--json"];
    start.extend(HTTPD);
    let first = b.run(&start);
    first.status(0);
    let first_id = first.json()["id"].as_str().unwrap().to_owned();

    // A new candy changes the image's labels, so the rebuild makes a new image.
    b.run(&["box", "new", "candy", "extra"]).status(0);
    b.run(&["box", "add-candy", "test-upd", "extra"]).status(0);
    let updated = b.run(&["update", "test-upd", "--json"]);
    updated.status(0);
    let json = updated.json();
    assert_eq!(json["image_changed"], true, "{}", updated.dump());
    assert_eq!(json["restarted"], true);
    assert_ne!(json["previous_image_id"], json["image_id"]);

    let status = b.run(&["status", "test-upd", "--json"]).json();
    let c = &status["containers"][0];
    assert_eq!(c["status"], "running");
    assert_ne!(c["id"], first_id.as_str(), "the container was recreated");
    assert_eq!(c["ports"][0]["host"], port, "same port");
    let env = b.run(&["cmd", "test-upd", "echo \"$GREETING\""]);
    env.status(0);
    assert_eq!(env.stdout, "hi there\n", "same env");
    assert!(http_get(port).contains("hello from busybox httpd"));
    let inspect = std::process::Command::new("podman")
        .args(["inspect", "--format", "{{index .Config.Labels \"ai.opencharly.candy\"}}", "charly-test-upd"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&inspect.stdout).trim(), "extra", "it runs the new image");

    // Not running: the image is rebuilt, nothing is started.
    b.run(&["stop", "test-upd"]).status(0);
    let updated = b.run(&["update", "test-upd", "--json"]);
    updated.status(0);
    assert_eq!(updated.json()["restarted"], false);
    assert!(
        updated.json()["summary"].as_str().unwrap().contains("`charly start test-upd` runs the new image")
    );
}

#[test]
fn remove_purge_removes_only_that_instances_volumes() {
    let b = Box::built("test-vol");
    let (own, other) = ("charly-test-vol-data", "charly-test-vol-2-data");
    b.cleanup().containers(&["charly-test-vol-2"]);
    b.cleanup().volumes(&[own, other]);
    b.run(&["start", "test-vol", "--volume", "data:/data"]).status(0);
    b.run(&["start", "test-vol", "-i", "2", "--volume", "data:/data"]).status(0);
    b.run(&["cmd", "test-vol", "-i", "2", "echo kept > /data/f"]).status(0);
    assert!(volume_exists(own) && volume_exists(other));

    let removed = b.run(&["remove", "test-vol", "--purge", "--json"]);
    removed.status(0);
    assert_eq!(removed.json()["volumes"], serde_json::json!([own]));
    assert!(!volume_exists(own));
    assert!(
        volume_exists(other),
        "the other instance's volume is kept (the reference's prefix match removed it)"
    );
    assert!(container_exists("charly-test-vol-2"));
    b.run(&["cmd", "test-vol", "-i", "2", "cat /data/f"]).status(0);

    let removed = b.run(&["remove", "test-vol", "-i", "2", "--purge", "--json"]);
    removed.status(0);
    assert_eq!(removed.json()["volumes"], serde_json::json!([other]));
    assert!(!volume_exists(other) && !container_exists("charly-test-vol-2"));
}

/// `remove` runs the image's `pre_remove` hooks in the running container first (they come
/// from a candy's `hook:` node, through the `ai.opencharly.hook` label), and reports each.
#[test]
fn remove_runs_the_pre_remove_hooks_first() {
    let b = Box::new("test-hook");
    b.candy(
        "test-hook",
        "bye",
        "bye:\n  candy: {}\nbye-hook:\n  hook: {pre_remove: 'echo bye from $CHARLY_CONTAINER > /out/bye', \
         post_enable: 'echo hello from $CHARLY_CONTAINER > /out/hello; exit 4'}\n",
    );
    b.run(&["box", "build", "test-hook"]).status(0);
    let out = b.proj().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let bind = format!("{}:/out", out.display());
    // post_enable: run once the container runs; a failing one is reported, and the container
    // stays up.
    let started = b.run(&["start", "test-hook", "--bind", &bind, "--json"]).status(0).json();
    assert_eq!(started["post_enable"][0]["exit_status"], 4, "{started}");
    assert_eq!(std::fs::read_to_string(out.join("hello")).unwrap(), "hello from charly-test-hook\n");
    b.run(&["cmd", "test-hook", "true"]).status(0);
    let removed = b.run(&["remove", "test-hook", "-t", "1", "--json"]).status(0).json();
    assert_eq!(removed["pre_remove"][0]["exit_status"], 0, "{removed}");
    assert_eq!(std::fs::read_to_string(out.join("bye")).unwrap(), "bye from charly-test-hook\n");
    assert!(!container_exists("charly-test-hook"));
    // Nothing runs: nothing to hook.
    let again = b.run(&["remove", "test-hook", "--json"]).status(0).json();
    assert_eq!(again["pre_remove"], serde_json::json!([]));
}

/// A candy's `data:` is copied into the image and seeded into its volume before the container
/// starts; files already in the volume are kept (a later start seeds again without
/// overwriting them).
#[test]
fn start_seeds_the_images_data_into_its_volume() {
    let b = Box::new("test-seed");
    b.cleanup().volumes(&["charly-test-seed-www"]);
    let site = b.proj().join("candy/site/html");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("index.html"), "<h1>seeded</h1>\n").unwrap();
    b.candy(
        "test-seed",
        "site",
        "site:\n  candy: {}\nsite-vol:\n  volume: [{name: www, path: /www}]\nsite-data:\n  data: [{volume: www, source: html, dest: pub}]\n",
    );
    b.run(&["box", "build", "test-seed"]).status(0);
    let port = free_port();
    let publish = format!("{port}:80");
    let args =
        ["start", "test-seed", "-p", &publish, "--json", "--", "httpd", "-f", "-p", "80", "-h", "/www/pub"];
    let started = b.run(&args).status(0).json();
    assert_eq!(started["seeded"], serde_json::json!(["www"]), "{started}");
    assert!(http_get(port).contains("seeded"));
    // Changed in the volume, then started again: the change stays.
    b.run(&["cmd", "test-seed", "echo changed > /www/pub/index.html"]).status(0);
    b.run(&["stop", "test-seed", "-t", "1"]).status(0);
    b.run(&args).status(0);
    assert!(http_get(port).contains("changed"));
    b.run(&["remove", "test-seed", "-t", "1", "--purge"]).status(0);
    assert!(!volume_exists("charly-test-seed-www"));
}

/// `start` as a tool: the argv a tool call rebuilds puts the box after `--` too, so the
/// command must not be a `last` argument (it took the box, and `box` was "missing").
#[test]
fn start_and_remove_as_mcp_tools() {
    let b = Box::built("test-tool");
    let mcp = serde_json::json!({"mcpServers": {"self": {"command": crate::util::CHARLY, "args": ["mcp", "serve", "--stdio"]}}});
    std::fs::write(b.proj().join(".mcp.json"), mcp.to_string()).unwrap();
    let call = |tool: &str, input: serde_json::Value| {
        let input = input.to_string();
        b.run(&["check", "mcp", "call", "--server", "self", "--tool", tool, "--input", &input])
    };
    call("start", serde_json::json!({"box": "test-tool"})).status(0);
    assert!(container_exists("charly-test-tool"));
    call("remove", serde_json::json!({"box": "test-tool", "timeout": 1})).status(0);
    let started = call(
        "start",
        serde_json::json!({"box": "test-tool", "command": ["sh", "-c", "echo from-the-tool; exec sleep 600"]}),
    );
    started.status(0);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !b.run(&["logs", "test-tool"]).stdout.contains("from-the-tool") {
        assert!(std::time::Instant::now() < deadline, "{}", b.run(&["logs", "test-tool"]).dump());
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    call("remove", serde_json::json!({"box": "test-tool", "purge": true, "timeout": 1})).status(0);
    assert!(!container_exists("charly-test-tool"));
}
