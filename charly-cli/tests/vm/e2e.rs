//! The issue's end-to-end case: a real Debian box (kernel, systemd, openssh-server) built into
//! a disk, booted under qemu (TCG here: KVM is kvm_pvm), reached with `vm ssh` through the
//! forwarded port on 127.0.0.1, its console read, `kill -9` of its qemu seen as stopped and
//! started again, stopped by ACPI and destroyed with its disk. Figures go to stderr
//! (`cargo test -p charly-cli --test vm -- --nocapture`).

use std::time::{Duration, Instant};

use crate::util::{Lab, free_port};

/// The longest a boot to SSH may take under TCG on a loaded 2-core machine.
const BOOT: &str = "300";

/// Reads an SSH banner from 127.0.0.1:`port` (retried for up to 30 s).
fn banner(port: u16) -> String {
    use std::io::Read as _;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut buf = [0u8; 64];
            if let Ok(n) = s.read(&mut buf)
                && n > 0
            {
                return String::from_utf8_lossy(&buf[..n]).into_owned();
            }
        }
        assert!(Instant::now() < deadline, "nothing sent a banner on 127.0.0.1:{port}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The local addresses (hex, as /proc/net/tcp writes them) listening on `port`.
fn listeners(port: u16) -> Vec<String> {
    let text = std::fs::read_to_string("/proc/net/tcp").unwrap()
        + &std::fs::read_to_string("/proc/net/tcp6").unwrap();
    let port = format!("{port:04X}");
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            let (addr, p) = fields.get(1)?.split_once(':')?;
            (p == port && fields.get(3) == Some(&"0A")).then(|| addr.to_owned())
        })
        .collect()
}

#[test]
fn a_box_boots_as_a_vm_reached_over_ssh_and_survives_kill_9() {
    let lab =
        Lab::with("test-vm-e2e", crate::util::VM_BASE, "extra:\n  candy: {}\nextra-port:\n  port: [8080]\n");
    let name = lab.name.clone();
    let n = name.as_str();

    // vm build: the disk in the data directory, never in the working directory.
    let built = lab.run(&["vm", "build", n, "--size", "2G", "--json"]);
    built.status(0);
    let b = built.json();
    let disk = lab.vm_dir().join("disk.qcow2");
    assert_eq!(b["disk"], disk.to_string_lossy().as_ref(), "{}", built.dump());
    assert!(
        disk.is_file() && lab.vm_dir().join("vmlinuz").is_file() && lab.vm_dir().join("initrd.img").is_file()
    );
    assert_eq!(
        (b["format"].as_str(), b["init"].as_str(), b["sshd"].as_bool()),
        (Some("qcow2"), Some("systemd"), Some(true))
    );
    assert_eq!(b["ports"], serde_json::json!([8080]));
    assert!(b["kernel_version"].as_str().unwrap().contains("amd64"), "{b}");
    let leftovers: Vec<String> = std::fs::read_dir(lab.vms())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|f| f != ".kvm-probe.json" && f != &format!("charly-{n}"))
        .collect();
    assert!(leftovers.is_empty(), "the build left {leftovers:?}");
    assert!(!lab.proj().join("output").exists());
    eprintln!(
        "figures: vm build {:.1} s; disk {:.1} MiB on the host ({:.1} MiB of files, {} MiB virtual)",
        b["secs"].as_f64().unwrap(),
        b["disk_bytes"].as_f64().unwrap() / 1048576.0,
        b["files_bytes"].as_f64().unwrap() / 1048576.0,
        b["size_bytes"].as_u64().unwrap() >> 20
    );

    // vm create: the box's port 8080 remapped to a free host port, SSH on another.
    let (ssh_port, web) = (free_port(), free_port());
    let (ssh_s, web_s) = (ssh_port.to_string(), format!("{web}:8080"));
    let created = lab.run(&[
        "vm",
        "create",
        n,
        "--ram",
        "512M",
        "--cpus",
        "2",
        "--ssh-port",
        &ssh_s,
        "--port",
        &web_s,
        "--json",
    ]);
    created.status(0);
    let c = created.json();
    assert_eq!(c["ssh_key"]["mode"], "auto");
    assert_eq!(c["ports"], serde_json::json!([{"host": web, "guest": 8080}]));
    use std::os::unix::fs::PermissionsExt as _;
    let key = lab.vm_dir().join("id_ed25519");
    assert_eq!(std::fs::metadata(&key).unwrap().permissions().mode() & 0o777, 0o600);

    // vm start --wait: boot to SSH.
    let started = lab.run(&["vm", "start", n, "--wait", BOOT, "--json"]);
    started.status(0);
    let s = started.json();
    let pid = s["pid"].as_u64().unwrap() as u32;
    let accel = s["accel"].as_str().unwrap().to_owned();
    if std::path::Path::new("/sys/module/kvm_pvm").exists() {
        assert_eq!(accel, "tcg", "KVM is kvm_pvm here: auto must fall back to TCG\n{}", started.dump());
        assert!(s["accel_why"].as_str().unwrap().contains("kvm_pvm"), "{}", started.dump());
    }
    eprintln!(
        "figures: boot to SSH under {} {:.1} s",
        accel.to_uppercase(),
        s["ssh_ready_secs"].as_f64().unwrap()
    );
    // Both forwards listen on 127.0.0.1 only.
    for port in [ssh_port, web] {
        assert_eq!(listeners(port), ["0100007F"], "port {port}");
    }
    lab.run(&["vm", "start", n])
        .status(2)
        .stderr_has(&["is running (qemu pid", "charly vm stop test-vm-e2e"]);

    // vm ssh: a command's output and status, through the forwarded port, host key pinned.
    let ssh = lab.run(&["vm", "ssh", n, "--command", "cat /proc/cmdline; id -un", "--json"]);
    ssh.status(0);
    let out = ssh.json()["stdout"].as_str().unwrap().to_owned();
    assert!(out.contains("root=/dev/vda") && out.ends_with("root\n"), "{}", ssh.dump());
    let failed = lab.run(&["vm", "ssh", n, "--command", "echo to-stderr >&2; exit 7", "--json"]);
    failed.status(1).stderr_has(&["the command exited with status 7"]);
    assert_eq!(failed.json()["exit_status"], 7);
    assert_eq!(failed.json()["stderr"], "to-stderr\n");
    // The box's port: an SSH server on guest port 8080 answers on the remapped host port.
    lab.run(&["vm", "ssh", n, "--command", "/usr/sbin/sshd -p 8080"]).status(0);
    assert!(banner(web).starts_with("SSH-2.0-OpenSSH"), "port {web}");
    // A wrong host key is refused by ssh itself, not trusted.
    let known = lab.vm_dir().join("known_hosts");
    let pinned = std::fs::read_to_string(&known).unwrap();
    assert!(pinned.starts_with(&format!("charly-{n} ")), "{pinned}");
    let other = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOQv8cQ2lX0aL0dJmWcYw5rCwzK3nq6Yx0Hq0b1n2M3p\n";
    std::fs::write(&known, format!("charly-{n} {other}")).unwrap();
    lab.run(&["vm", "ssh", n, "--command", "true"]).status(2).stderr_has(&["Host key verification failed"]);
    std::fs::write(&known, pinned).unwrap();

    // vm console: its boot, as the log's tail (no terminal here, and as a tool).
    let console = lab.run(&["vm", "console", n, "--json"]);
    console.status(0);
    let lines = console.json()["lines"].as_array().unwrap().clone();
    assert_eq!(console.json()["attached"], false);
    assert!(lines.iter().any(|l| l.as_str().unwrap().contains("Debian GNU/Linux 12")), "{}", console.dump());
    let early = lab.run(&["vm", "console", n, "--lines", "100000"]);
    assert!(
        early.stdout.contains("Linux version 6."),
        "the log holds the kernel's first lines\n{}",
        early.dump()
    );

    // On a terminal: the console attached (a login prompt for a return, Ctrl-] detaches), and
    // an interactive shell.
    let attached = lab.on_terminal(&["vm", "console", n], &[("Ctrl-] detaches", "\r"), ("login:", "\u{1d}")]);
    assert!(attached.contains(&format!("detached from charly-{n}'s console")), "{attached}");
    let shell = lab.on_terminal(&["vm", "ssh", n], &[("root@", "echo pty-$((6*7))\r"), ("pty-42", "exit\r")]);
    assert!(shell.contains("logout"), "{shell}");

    // As MCP tools (a real `charly mcp serve --stdio`): nothing waits on a terminal.
    let mcp = serde_json::json!({"mcpServers": {"self": {"command": crate::util::CHARLY, "args": ["mcp", "serve", "--stdio"]}}});
    std::fs::write(lab.proj().join(".mcp.json"), mcp.to_string()).unwrap();
    let call = |tool: &str, input: serde_json::Value| {
        let input = input.to_string();
        lab.run(&["check", "mcp", "call", "--server", "self", "--tool", tool, "--input", &input])
    };
    let tool = call("vm.ssh", serde_json::json!({"box": n, "command": "echo over-mcp"}));
    tool.status(0);
    assert!(tool.stdout.contains("over-mcp"), "{}", tool.dump());
    let tool = call("vm.console", serde_json::json!({"box": n}));
    tool.status(0);
    assert!(tool.stdout.contains("Debian GNU/Linux 12"), "{}", tool.dump());
    call("vm.ssh", serde_json::json!({"box": n})).status(1);

    // vm list: running ones by default, every one with --all.
    let list = lab.run(&["vm", "list", "--json"]);
    list.status(0);
    let l = list.json();
    assert_eq!(l["vms"][0]["name"], format!("charly-{n}"));
    assert_eq!(
        (l["vms"][0]["state"].as_str(), l["vms"][0]["accel"].as_str()),
        (Some("running"), Some(accel.as_str()))
    );
    assert_eq!(l["host"]["accel"].as_str(), Some(accel.as_str()), "{}", list.dump());

    // kill -9 of qemu: seen as stopped; stop says why; start starts it again.
    std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while lab.qemus().contains(&pid) {
        assert!(Instant::now() < deadline, "qemu {pid} survived kill -9");
        std::thread::sleep(Duration::from_millis(100));
    }
    let list = lab.run(&["vm", "list", "--json"]);
    assert_eq!(list.json()["vms"], serde_json::json!([]), "{}", list.dump());
    let all = lab.run(&["vm", "list", "--all"]);
    all.status(0);
    assert!(all.stdout.starts_with(&format!("charly-{n}\tstopped\t")), "{}", all.dump());
    assert!(
        all.stdout.contains(&format!("its qemu (pid {pid}) ended without `charly vm stop`")),
        "{}",
        all.dump()
    );
    lab.run(&["vm", "stop", n]).status(2).stderr_has(&[
        "is not running: its qemu (pid",
        "ended without `charly vm stop`",
        "charly vm start test-vm-e2e",
    ]);
    let again = lab.run(&["vm", "start", n, "--wait", BOOT, "--json"]);
    again.status(0);
    eprintln!("figures: boot to SSH after kill -9 {:.1} s", again.json()["ssh_ready_secs"].as_f64().unwrap());
    let ssh = lab.run(&["vm", "ssh", n, "--command", "echo again"]);
    ssh.status(0);
    assert_eq!(ssh.stdout, "again\n");

    // vm stop: the ACPI power button; the guest shuts down by itself.
    let stopped = lab.run(&["vm", "stop", n, "--json"]);
    stopped.status(0);
    assert_eq!(stopped.json()["how"], "acpi", "{}", stopped.dump());
    eprintln!("figures: ACPI stop {:.1} s", stopped.json()["secs"].as_f64().unwrap());
    assert!(lab.qemus().is_empty());
    let tail = lab.run(&["vm", "console", n, "--lines", "30"]).stdout;
    assert!(tail.contains("reboot: Power down"), "the guest powered itself off\n{tail}");
    assert!(!lab.vm_dir().join("qmp.sock").exists() && !lab.vm_dir().join("run.json").exists());

    // vm destroy --disk: nothing of the VM is left.
    let destroyed = lab.run(&["vm", "destroy", n, "--disk", "--json"]);
    destroyed.status(0);
    assert_eq!(destroyed.json()["disk_removed"], true);
    assert!(!lab.vm_dir().exists());
    let list = lab.run(&["vm", "list", "--all", "--json"]);
    assert_eq!(list.json()["vms"], serde_json::json!([]), "{}", list.dump());
}
