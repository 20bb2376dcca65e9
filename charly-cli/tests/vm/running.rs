//! One booted VM (TCG: 30 to 60 s to SSH here), for what only a running guest shows: ssh's
//! "Permission denied" explained as such, `--timeout` stopping the command in the guest, and a
//! second `vm console` attach refused while the first keeps working, and a guest's own poweroff
//! told apart from a crash.

use crate::util::{Lab, free_port};

#[test]
fn a_running_vm_explains_auth_failures_stops_timed_out_commands_and_refuses_a_second_console() {
    let lab = Lab::new("test-i17f-boot");
    let n = lab.name.clone();
    let n = n.as_str();
    lab.run(&["vm", "build", n]).status(0);
    let ssh_port = free_port().to_string();
    lab.run(&["vm", "create", n, "--ram", "1G", "--cpus", "1", "--ssh-port", &ssh_port]).status(0);
    lab.run(&["vm", "start", n, "--wait", "240"]).status(0);

    // The server answered and refused: not "is its SSH server up yet".
    let denied = lab.run(&["vm", "ssh", n, "--command", "true", "--user", "nobody"]);
    denied.status(2).stderr_has(&["Permission denied", "the VM's key is given to root only"]);
    assert!(!denied.stderr.contains("up yet"), "{}", denied.dump());

    // Output and status as before the watcher: stdout and stderr apart, the guest's status.
    let ran = lab.run(&["vm", "ssh", n, "--command", "echo out; echo err >&2; exit 3", "--json"]);
    ran.status(1);
    let json = ran.json();
    assert_eq!(
        (json["exit_status"].as_i64(), json["stdout"].as_str(), json["stderr"].as_str()),
        (Some(3), Some("out\n"), Some("err\n")),
        "{}",
        ran.dump()
    );

    // --timeout stops the command in the guest too.
    lab.run(&["vm", "ssh", n, "--command", "sleep 100; echo never", "--timeout", "3"])
        .status(2)
        .stderr_has(&["did not finish within 3 s", "with it the command in the guest"]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let left = lab.run(&["vm", "ssh", n, "--command", "pgrep -x sleep || echo gone"]);
        left.status(0);
        if left.stdout.trim() == "gone" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the guest's sleep outlived --timeout: {}",
            left.dump()
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }

    // As a tool, each stream is capped at 1 MiB, saying how much was cut (issue 17 trial L8:
    // 5 MB of output made a 13.7 MB reply the client gave up on); on a terminal it is whole.
    let mcp = serde_json::json!({"mcpServers": {"self": {"command": crate::util::CHARLY, "args": ["mcp", "serve", "--stdio"]}}});
    std::fs::write(lab.proj().join(".mcp.json"), mcp.to_string()).unwrap();
    let big = "head -c 3000000 /dev/zero | tr '\\0' x; head -c 5000 /dev/zero | tr '\\0' y >&2";
    let input = serde_json::json!({"box": n, "command": big}).to_string();
    let tool = lab
        .run(&["check", "mcp", "call", "--server", "self", "--tool", "vm.ssh", "--input", &input, "--json"]);
    tool.status(0);
    let s = &tool.json()["structuredContent"];
    let cap = charly_cli::report::TOOL_OUTPUT_CAP;
    assert_eq!(s["stdout"].as_str().map(str::len), Some(cap), "stdout is cut at the cap");
    assert_eq!(s["stdout_cut"].as_u64(), Some(3_000_000 - cap as u64), "and says how much was left out");
    assert_eq!(
        (s["stderr"].as_str().map(str::len), s.get("stderr_cut")),
        (Some(5000), None),
        "stderr is whole"
    );
    let text = tool.json()["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(
        text.contains(&format!("[charly: stdout cut after its first {cap} bytes (the tool output cap); {} more bytes were left out", 3_000_000 - cap)),
        "{}",
        &text[text.len().saturating_sub(600)..]
    );
    let whole = lab.run(&["vm", "ssh", n, "--command", big, "--json"]);
    whole.status(0);
    assert_eq!(whole.json()["stdout"].as_str().map(str::len), Some(3_000_000), "not cut on a terminal");
    assert!(whole.json().get("stdout_cut").is_none());

    // A second console attach is refused, naming the first, which keeps working.
    let first = std::thread::scope(|scope| {
        let first =
            scope.spawn(|| lab.terminal(&["vm", "console", n], &[("detaches", ""), ("i17f-go", "\x1d")]));
        let attach = lab.vm_dir().join("console.attach");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while std::fs::read_to_string(&attach).map_or(true, |p| p.trim().is_empty()) {
            assert!(std::time::Instant::now() < deadline, "the first attach wrote no console.attach");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let (status, second) = lab.terminal(&["vm", "console", n], &[]);
        assert_eq!(status.code(), Some(2), "{second}");
        assert!(second.contains("serial console is attached already, by charly pid"), "{second}");
        lab.run(&["vm", "ssh", n, "--command", "echo i17f-go > /dev/ttyS0"]).status(0);
        first.join().unwrap()
    });
    assert!(first.0.success() && first.1.contains("i17f-go"), "{first:?}");

    // A guest that powers itself off is not reported as a crash.
    lab.run(&["vm", "ssh", n, "--command", "systemctl poweroff --no-block"]).status(0);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    while !lab.qemus().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the guest did not power off");
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let all = lab.run(&["vm", "list", "--all"]);
    all.status(0);
    assert!(all.stdout.contains("ended when the guest powered itself off"), "{}", all.dump());
    lab.run(&["vm", "destroy", n, "--disk"]).status(0);
    assert!(lab.qemus().is_empty());
}
