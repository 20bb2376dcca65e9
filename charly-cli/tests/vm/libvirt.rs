//! The libvirt backend against a real libvirt 9.0 session daemon. Session mode is a user's own
//! daemon (as root, `qemu:///session` is the system daemon), so the test runs `libvirtd` and
//! charly as uid 4242, with nss_wrapper for the passwd entry that uid lacks here and
//! `stdio_handler = "file"` in its qemu.conf (RUNTIMES.md §8); the disk is built as root first.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{Lab, Run, free_port};

const UID: u32 = 4242;
const NSS_WRAPPER: &str = "/usr/lib/x86_64-linux-gnu/libnss_wrapper.so";

/// libvirtd as uid 4242 in the lab's HOME; killed when dropped.
struct Session {
    daemon: Child,
    env: Vec<(String, PathBuf)>,
    /// A copy of the binary under test in the lab: uid 4242 may not reach the build's target
    /// directory (a checkout under a mode-0700 directory, as `mktemp -d` makes).
    charly: PathBuf,
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

impl Session {
    fn start(lab: &Lab) -> Session {
        assert!(
            Path::new(NSS_WRAPPER).is_file() && Command::new("libvirtd").arg("--version").output().is_ok(),
            "libvirt or nss_wrapper is missing: run scripts/runtimes.sh as root"
        );
        let top = lab.proj().parent().unwrap().to_owned();
        let home = top.join("home");
        let run = top.join("run");
        std::fs::create_dir_all(home.join(".config/libvirt")).unwrap();
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(home.join(".config/libvirt/qemu.conf"), "stdio_handler = \"file\"\n").unwrap();
        std::fs::write(
            top.join("passwd"),
            format!(
                "root:x:0:0:root:/root:/bin/sh\nu{UID}:x:{UID}:{UID}:charly test:{}:/bin/sh\n",
                home.display()
            ),
        )
        .unwrap();
        std::fs::write(top.join("group"), format!("root:x:0:\nu{UID}:x:{UID}:\n")).unwrap();
        let charly = top.join("charly");
        std::fs::copy(crate::util::CHARLY, &charly).unwrap();
        let chown = Command::new("chown").args(["-R", &format!("{UID}:{UID}")]).arg(&top).status().unwrap();
        assert!(chown.success());
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
        let env = vec![
            ("HOME".to_owned(), home),
            ("XDG_RUNTIME_DIR".to_owned(), run.clone()),
            ("LD_PRELOAD".to_owned(), PathBuf::from(NSS_WRAPPER)),
            ("NSS_WRAPPER_PASSWD".to_owned(), top.join("passwd")),
            ("NSS_WRAPPER_GROUP".to_owned(), top.join("group")),
        ];
        let mut daemon = Command::new("libvirtd");
        daemon.uid(UID).gid(UID).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        for (key, value) in &env {
            daemon.env(key, value);
        }
        let session = Session { daemon: daemon.spawn().expect("start libvirtd"), env, charly };
        let socket = run.join("libvirt/libvirt-sock");
        let deadline = Instant::now() + Duration::from_secs(20);
        while !socket.exists() {
            assert!(Instant::now() < deadline, "libvirtd made no session socket {}", socket.display());
            std::thread::sleep(Duration::from_millis(100));
        }
        session
    }

    /// `charly <args>` as uid 4242, in the session's environment.
    fn run(&self, lab: &Lab, args: &[&str]) -> Run {
        let mut cmd = lab.command(self.charly.to_str().unwrap());
        cmd.uid(UID).gid(UID).args(args);
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        Run::of(&mut cmd, args)
    }
}

#[test]
fn the_libvirt_session_backend_runs_a_vm_like_the_qemu_one() {
    let lab = Lab::new("test-vm-libvirt");
    let n = "test-vm-libvirt";
    lab.run(&["vm", "build", n, "--size", "2G"]).status(0);
    let session = Session::start(&lab);
    let ssh_port = free_port().to_string();
    let created = session
        .run(&lab, &["vm", "create", n, "--ram", "512M", "--cpus", "1", "--ssh-port", &ssh_port, "--json"]);
    created.status(0);
    assert_eq!(created.json()["backend"], "libvirt", "auto picks the session daemon\n{}", created.dump());
    let domain = std::fs::read_to_string(lab.vm_dir().join("domain.xml")).unwrap();
    assert!(
        domain.contains("<features><acpi/></features>") && domain.contains("<entry>io.systemd.credential")
    );

    let started = session.run(&lab, &["vm", "start", n, "--wait", "300", "--json"]);
    started.status(0);
    let s = started.json();
    assert_eq!(s["backend"], "libvirt");
    // /dev/kvm is root's here: TCG, whatever the module.
    assert_eq!(s["accel"], "tcg", "{}", started.dump());
    eprintln!("figures: libvirt boot to SSH under TCG {:.1} s", s["ssh_ready_secs"].as_f64().unwrap());
    session.run(&lab, &["vm", "start", n]).status(2).stderr_has(&["is running (libvirt domain)"]);

    let ssh = session.run(&lab, &["vm", "ssh", n, "--command", "id -un; cat /proc/cmdline"]);
    ssh.status(0);
    assert!(ssh.stdout.starts_with("root\n") && ssh.stdout.contains("root=/dev/vda"), "{}", ssh.dump());
    let console = session.run(&lab, &["vm", "console", n, "--lines", "2000"]);
    console.status(0);
    assert!(console.stdout.contains("Debian GNU/Linux 12"), "{}", console.dump());
    let list = session.run(&lab, &["vm", "list", "--json"]);
    list.status(0);
    let row = &list.json()["vms"][0];
    assert_eq!(
        (row["state"].as_str(), row["backend"].as_str()),
        (Some("running"), Some("libvirt")),
        "{}",
        list.dump()
    );
    assert_eq!(list.json()["host"]["libvirt"], true);

    let stopped = session.run(&lab, &["vm", "stop", n, "--json"]);
    stopped.status(0);
    assert_eq!(stopped.json()["how"], "acpi");
    let tail = session.run(&lab, &["vm", "console", n, "--lines", "30"]).stdout;
    assert!(tail.contains("reboot: Power down"), "{tail}");
    session.run(&lab, &["vm", "stop", n]).status(2).stderr_has(&["is not running (libvirt: shut off)"]);
    let all = session.run(&lab, &["vm", "list", "--all", "--json"]);
    assert_eq!(all.json()["vms"][0]["state"], "shut off", "{}", all.dump());

    session.run(&lab, &["vm", "destroy", n, "--disk"]).status(0);
    assert!(!lab.vm_dir().exists());
    let all = session.run(&lab, &["vm", "list", "--all", "--json"]);
    assert_eq!(all.json()["vms"], serde_json::json!([]), "the domain is undefined\n{}", all.dump());
    assert!(lab.qemus().is_empty());
}
