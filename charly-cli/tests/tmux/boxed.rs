//! The families through a real box: box `test-tm-wl` on `localhost/charly-wayland` (bookworm
//! minbase with supervisor, sway, foot, tmux, asciinema, wf-recorder, built by
//! `scripts/runtimes.sh`), its candy running sway headless under supervisord as uid 4250 (sway
//! refuses root) with `XDG_RUNTIME_DIR=/run/desk` and an empty config (no bar: a still desktop
//! draws no frames), built with `charly box build` and started with `charly start` once for
//! the binary. tmux runs inside the container as its exec user (root), on its default server;
//! the tests use different session names, so they run in parallel.
//!
//! The container is removed when the test binary ends, however it ends: a watcher process
//! (`tail --pid`) waits for this process and removes the container and image by the ids this
//! run recorded, and the project directory.

use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::util::{Box, Run, record};

/// The box.
const NAME: &str = "test-tm-wl";
/// Its container.
const CONTAINER: &str = "charly-test-tm-wl";
/// The Wayland base image.
const WAYLAND: &str = "localhost/charly-wayland:latest";

/// sway headless as uid 4250 in its own runtime directory (the candy's supervisord program).
const SWAY: &str = "sh -c 'mkdir -p /run/desk && chown 4250:4250 /run/desk && chmod 700 /run/desk && exec setpriv \
                    --reuid 4250 --regid 4250 --clear-groups env HOME=/run/desk XDG_RUNTIME_DIR=/run/desk \
                    WLR_BACKENDS=headless WLR_LIBINPUT_NO_DEVICES=1 WLR_RENDERER=pixman sway -c /dev/null'";

/// The running box.
struct Desk {
    project: Mutex<Box>,
}

impl Desk {
    fn run(&self, args: &[&str]) -> Run {
        let mut cmd = self.project.lock().unwrap_or_else(|e| e.into_inner()).charly();
        cmd.env_remove("TMUX").args(args);
        Run::of(&mut cmd, args)
    }

    /// Runs `charly <args>` until its stdout contains `text`, for at most 20 s.
    #[track_caller]
    fn until(&self, args: &[&str], text: &str) -> Run {
        let started = Instant::now();
        loop {
            let run = self.run(args);
            if run.code == Some(0) && run.stdout.contains(text) {
                return run;
            }
            assert!(started.elapsed() < Duration::from_secs(20), "no {text:?} within 20 s\n{}", run.dump());
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// `podman exec <container> <args>`: stdout, and whether it succeeded.
fn exec(args: &[&str]) -> (bool, String) {
    let out = Command::new("podman").arg("exec").arg(CONTAINER).args(args).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

fn desk() -> &'static Desk {
    static DESK: OnceLock<Result<Desk, String>> = OnceLock::new();
    let made = DESK.get_or_init(|| {
        std::panic::catch_unwind(make).map_err(|e| {
            let text = e.downcast_ref::<String>().cloned();
            text.or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
        })
    });
    made.as_ref().unwrap_or_else(|e| panic!("the shared box {NAME} did not start: {e}"))
}

fn make() -> Desk {
    let b = Box::with_base(NAME, WAYLAND);
    watch(&b);
    let candy = format!(
        "tmwl:\n  candy: {{description: \"sway headless as uid 4250, for the tmux and record tests\"}}\n\
         tmwl-svc:\n  service:\n    - {{name: sway, command: {}}}\n",
        serde_json::to_string(SWAY).unwrap()
    );
    b.candy(NAME, "tmwl", &candy);
    b.run(&["box", "validate"]).status(0);
    let started = Instant::now();
    b.run(&["box", "build", NAME]).status(0);
    eprintln!("tmux: box build {NAME} took {:?}", started.elapsed());
    record(&b, "images", &["image", "inspect", "--format", "{{.Id}}", &format!("localhost/{NAME}:latest")]);
    b.run(&["start", NAME]).status(0);
    record(&b, "containers", &["container", "inspect", "--format", "{{.Id}}", CONTAINER]);
    let desk = Desk { project: Mutex::new(b) };
    let started = Instant::now();
    while !exec(&["sh", "-c", "ls /run/desk"]).1.contains("wayland-") {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "sway did not start: {}",
            desk.run(&["logs", NAME]).stdout
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!("tmux: sway listens after {:?}", started.elapsed());
    desk
}

/// Starts the watcher: when this process ends, it removes the container and image recorded in
/// the test's directory, the box's dangling images and the directory.
fn watch(b: &Box) {
    let dir = b.proj().parent().unwrap().to_owned();
    let script = format!(
        "(tail --pid={pid} -f /dev/null; cd '{dir}' && for c in $(cat containers); do podman rm -f -t 0 $c; done; \
         for i in $(cat images); do podman rmi -f $i; done; \
         podman image prune -f --filter label=ai.opencharly.box={NAME}; cd / && rm -rf '{dir}') \
         </dev/null >/dev/null 2>&1 &",
        pid = std::process::id(),
        dir = dir.display()
    );
    let started = Command::new("sh").args(["-c", &script]).stdin(Stdio::null()).status();
    assert!(started.is_ok_and(|s| s.success()), "sh cannot start the cleanup watcher");
}

#[test]
fn tmux_sessions_in_the_box() {
    let d = desk();
    let listed = d.run(&["--json", "tmux", "list", NAME]);
    listed.status(0);
    assert_eq!(listed.json()["container"], CONTAINER);
    d.run(&["tmux", "run", NAME, "-s", "work", "--", "sh", "-c", "cat > /tmp/typed.txt"]).status(0);
    d.run(&["tmux", "run", NAME, "-s", "work", "--", "true"])
        .status(2)
        .stderr_has(&[&format!("tmux session \"work\" exists already in container {CONTAINER}")]);
    // Typed literally: the text reaches cat byte for byte and no substitution runs, neither in
    // the container nor on the host.
    let text = "it's \"q\" $(touch /tmp/pwned) `touch /tmp/pwned2`\nnext; line;";
    d.run(&["tmux", "send", NAME, "-s", "work", "--literal", "--enter", "--", text]).status(0);
    d.run(&["tmux", "send", NAME, "-s", "work", "C-d"]).status(0);
    let started = Instant::now();
    loop {
        let (_, got) = exec(&["cat", "/tmp/typed.txt"]);
        if got == format!("{text}\n") {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "/tmp/typed.txt holds {got:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(!exec(&["test", "-e", "/tmp/pwned"]).0 && !exec(&["test", "-e", "/tmp/pwned2"]).0);

    // A shell session as a tool would get it: made, and its pane.
    let shell = d.run(&["--json", "tmux", "shell", NAME, "-s", "sh"]);
    shell.status(0);
    assert_eq!(shell.json()["created"], true, "{}", shell.dump());
    assert!(!shell.json()["lines"].as_array().unwrap().is_empty(), "{}", shell.dump());
    d.run(&["tmux", "cmd", NAME, "-s", "sh", "echo \"in-$((2*21))\""]).status(0);
    d.until(&["tmux", "capture", NAME, "-s", "sh"], "\nin-42\n");
    d.until(&["tmux", "attach", NAME, "-s", "sh"], "\nin-42\n");
    // On a terminal, attach is `podman exec -it ... tmux attach-session`: detached from inside.
    let env = d.project.lock().unwrap_or_else(|e| e.into_inner()).charly();
    let dir = d.project.lock().unwrap_or_else(|e| e.into_inner()).proj();
    let clients = || exec(&["tmux", "list-clients", "-t", "=sh", "-F", "#{client_name}"]).1;
    let detach = || exec(&["tmux", "detach-client", "-s", "=sh"]).0;
    let text = crate::leaves::attached(&env, &dir, &["tmux", "attach", NAME, "-s", "sh"], &clients, &detach);
    assert!(text.contains(&format!("detached from tmux session sh in container {CONTAINER}")), "{text}");
    let names = d.run(&["--json", "tmux", "list", NAME]).json()["sessions"].clone();
    let names: Vec<&str> = names.as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"sh"), "{names:?}");
    d.run(&["tmux", "kill", NAME, "-s", "sh"]).status(0);
    d.run(&["tmux", "kill", NAME, "-s", "sh"])
        .status(2)
        .stderr_has(&[&format!("there is no tmux session \"sh\" in container {CONTAINER}")]);
}

#[test]
fn a_terminal_recording_in_the_box_is_copied_out() {
    let d = desk();
    let started = d.run(&["--json", "record", "start", NAME, "-n", "term"]);
    started.status(0);
    assert_eq!(started.json()["file"], "/tmp/term.cast");
    d.run(&["record", "start", NAME, "-n", "term"]).status(2).stderr_has(&["was started already"]);
    d.run(&["record", "cmd", NAME, "-n", "term", "echo \"box-$((6*7))\" 'x;'"]).status(0);
    d.until(&["tmux", "capture", NAME, "-s", "record-term"], "\nbox-42 x;\n");
    let out = tempfile::tempdir().unwrap();
    let cast = out.path().join("term.cast");
    let stopped = d.run(&["--json", "record", "stop", NAME, "-n", "term", "-o", cast.to_str().unwrap()]);
    stopped.status(0);
    let json = stopped.json();
    assert_eq!(json["clean"], true, "{json}");
    assert_eq!(json["bytes"].as_u64(), Some(std::fs::metadata(&cast).unwrap().len()));
    let (_, output) = crate::record::read_cast(&cast);
    assert!(output.contains("box-42 x;"), "{output:?}");
    let left = d.run(&["--json", "record", "list", NAME]).json();
    assert!(!left["recordings"].as_array().unwrap().iter().any(|r| r["name"] == "term"), "{left}");
}

#[test]
fn a_desktop_recording_of_sway_in_the_box_gives_an_mp4_with_frames() {
    let d = desk();
    let started = d.run(&["--json", "record", "start", NAME, "-n", "desk", "-m", "desktop"]);
    started.status(0);
    assert_eq!(
        (started.json()["tool"].as_str(), started.json()["file"].as_str()),
        (Some("wf-recorder"), Some("/tmp/desk.mp4"))
    );
    d.run(&["record", "start", NAME, "-n", "desk", "-m", "desktop"])
        .status(2)
        .stderr_has(&["was started already"]);
    let listed = d.run(&["record", "list", NAME]);
    assert!(listed.stdout.contains("desk\tdesktop\t/tmp/desk.mp4\n"), "{}", listed.dump());
    // No shell to type into: refused, naming what types on the desktop.
    d.run(&["record", "cmd", NAME, "-n", "desk", "echo hi"])
        .status(2)
        .stderr_has(&["recording \"desk\" records the desktop", "charly check wl type"]);
    // Something to record: a foot window, which sway starts.
    let (ok, _) = exec(&["sh", "-c", "swaymsg -s /run/desk/sway-ipc.*.sock exec foot"]);
    assert!(ok, "swaymsg exec foot");
    let started = Instant::now();
    while !exec(&["sh", "-c", "swaymsg -s /run/desk/sway-ipc.*.sock -t get_tree"])
        .1
        .contains("\"app_id\": \"foot\"")
    {
        assert!(started.elapsed() < Duration::from_secs(20), "no foot window");
        std::thread::sleep(Duration::from_millis(200));
    }
    // Then a still desktop: wf-recorder gets no frame by itself, and stop has to draw one.
    std::thread::sleep(Duration::from_secs(2));
    let out = tempfile::tempdir().unwrap();
    let mp4 = out.path().join("desk.mp4");
    let stopped = d.run(&["--json", "record", "stop", NAME, "-n", "desk", "-o", mp4.to_str().unwrap()]);
    stopped.status(0);
    let json = stopped.json();
    // Ended by itself (not killed at the 8 s limit: `clean`); its status 0, or none when tmux
    // left the exited recorder unreaped (record.rs `Ended`: seen under load, where wf-recorder
    // also took 7.5 s to finish its file).
    assert_eq!(json["clean"].as_bool(), Some(true), "{json}");
    assert!(matches!(json["exit_status"].as_i64(), Some(0) | None), "{json}");
    let probe = Command::new("ffprobe")
        .args(["-v", "error", "-count_frames", "-select_streams", "v:0"])
        .args(["-show_entries", "stream=codec_name,width,height,nb_read_frames", "-of", "json"])
        .arg(&mp4)
        .output()
        .unwrap();
    assert!(probe.status.success(), "ffprobe: {}", String::from_utf8_lossy(&probe.stderr));
    let info: serde_json::Value = serde_json::from_slice(&probe.stdout).unwrap();
    let stream = &info["streams"][0];
    assert_eq!(stream["codec_name"], "h264", "{info}");
    assert_eq!((stream["width"].as_u64(), stream["height"].as_u64()), (Some(1280), Some(720)), "{info}");
    let frames: u64 = stream["nb_read_frames"].as_str().unwrap().parse().unwrap();
    assert!(frames >= 2, "{info}");
    eprintln!(
        "tmux: desktop recording: {frames} frames, {} bytes, stop took {} ms",
        json["bytes"], json["took_ms"]
    );
}

#[test]
fn a_box_without_tmux_says_which_candy_adds_it() {
    let b = Box::built("test-tm-bb");
    b.run(&["start", "test-tm-bb"]).status(0);
    b.run(&["tmux", "list", "test-tm-bb"]).status(2).stderr_has(&[
        "tmux is not installed in container charly-test-tm-bb: add a candy with the package tmux to box test-tm-bb",
        "`charly candy add-deb tmux tmux`",
        "`charly update test-tm-bb`",
    ]);
    b.run(&["record", "start", "test-tm-bb"])
        .status(2)
        .stderr_has(&["asciinema is not installed in container charly-test-tm-bb (for terminal recordings)"]);
    // A box that is not the project's (issue 16 trial L13: "not started; start it"): named as
    // such, with the project's boxes.
    b.run(&["tmux", "list", "test-tm-none"])
        .status(2)
        .stderr_has(&["box test-tm-none is not a box of this project", "charly.yml: test-tm-bb"]);
}
