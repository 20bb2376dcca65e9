//! Every `tmux.*` leaf on this machine (`.`), against real tmux on the test's private servers.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::local::{Local, wait_for_file};

fn names(run: &crate::util::Run) -> Vec<String> {
    let json = run.json();
    json["sessions"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn run_list_and_kill_sessions() {
    let t = Local::new("rlk");
    // No server yet: an empty list, not an error.
    let none = t.run(&["tmux", "list", "."]);
    none.status(0);
    assert_eq!(none.stdout, "no tmux sessions on this machine\n");
    assert_eq!(names(&t.run(&["--json", "tmux", "list", "."])), Vec::<String>::new());

    let typed = t.path().join("typed.txt");
    let cat = format!("cat > {}", typed.display());
    let started = t.run(&["tmux", "run", ".", "-s", "work", "--", "sh", "-c", &cat]);
    started.status(0);
    // The command shown as a shell would read it back: its argument boundaries visible.
    assert_eq!(started.stdout, format!("started tmux session work on this machine: sh -c '{cat}'\n"));
    // The same name again: refused, naming the session; the first one is untouched.
    let again = t.run(&["tmux", "run", ".", "-s", "work", "--", "sleep", "60"]);
    again.status(2).stderr_has(&["tmux session \"work\" exists already on this machine"]);
    let listed = t.run(&["--json", "tmux", "list", "."]);
    assert_eq!(names(&listed), ["work"]);
    let session = &listed.json()["sessions"][0];
    assert_eq!((session["windows"].as_u64(), session["attached"].as_u64()), (Some(1), Some(0)));
    assert!(session["created"].as_u64().unwrap() > 1_700_000_000);
    // The program runs as given (sh -c, as the test asked), in the one session.
    t.run(&["tmux", "send", ".", "-s", "work", "--literal", "first line", "--enter"]).status(0);
    t.run(&["tmux", "send", ".", "-s", "work", "C-d"]).status(0);
    wait_for_file(&typed);
    // cat has ended: its pane stays (remain-on-exit), until killed.
    t.run(&["tmux", "kill", ".", "-s", "work"]).status(0);

    t.run(&["tmux", "run", ".", "-s", "other", "--", "sleep", "60"]).status(0);
    let killed = t.run(&["tmux", "kill", ".", "-s", "other"]);
    killed.status(0);
    assert_eq!(killed.stdout, "killed tmux session other on this machine\n");
    // Killing it again: a clear error naming it and what there is.
    t.run(&["tmux", "kill", ".", "-s", "other"])
        .status(2)
        .stderr_has(&["there is no tmux session \"other\" on this machine; there are none"]);
}

#[test]
fn a_program_that_exits_at_once_is_reported_with_its_status_and_output() {
    let t = Local::new("i16f-ex");
    // A missing program: refused (exit 1) with env's words, and no session is left.
    let missing = t.run(&["tmux", "run", ".", "-s", "np", "--", "nosuchprog-i16f", "arg"]);
    missing.status(1).stderr_has(&["nosuchprog-i16f is not installed on this machine or not on its PATH"]);
    assert!(missing.stdout.contains("No such file or directory"), "{}", missing.dump());
    // A lone word too: run through env as given, never `sh -c`.
    t.run(&["tmux", "run", ".", "-s", "np1", "--", "nosuchprog-i16f"]).status(1);
    // A program that fails at once: its status and what it printed.
    let quick =
        t.run(&["--json", "tmux", "run", ".", "-s", "quick", "--", "sh", "-c", "echo result-42; exit 3"]);
    quick.status(1);
    let json = quick.json();
    assert_eq!(json["exit_status"], 3, "{json}");
    assert_eq!(json["output"][0], "result-42", "{json}");
    // One that succeeds at once: exit 0, its output shown.
    let done = t.run(&["tmux", "run", ".", "-s", "done", "--", "echo", "all-done"]);
    done.status(0);
    assert!(done.stdout.contains("exited at once") && done.stdout.contains("  all-done"), "{}", done.dump());
    assert_eq!(t.run(&["tmux", "list", "."]).stdout, "no tmux sessions on this machine\n");
    // One that exits later: its pane stays (remain-on-exit), so capture still shows its output.
    t.run(&["tmux", "run", ".", "-s", "later", "--", "sh", "-c", "sleep 1; echo later-7; exit 7"]).status(0);
    t.until(&["tmux", "capture", ".", "-s", "later"], "later-7");
    std::thread::sleep(Duration::from_millis(500));
    let shown = t.run(&["tmux", "capture", ".", "-s", "later", "--lines", "50"]);
    assert!(shown.status(0).stdout.contains("later-7"), "{}", shown.dump());
}

#[test]
fn literal_text_is_typed_as_it_is_never_run() {
    let t = Local::new("lit");
    let typed = t.path().join("typed.txt");
    let dollar = t.path().join("dollar");
    let tick = t.path().join("tick");
    let cat = format!("cat > {}", typed.display());
    t.run(&["tmux", "run", ".", "-s", "lit", "--", "sh", "-c", &cat]).status(0);
    // Quotes, $(), backticks, a `;` at the end (tmux's own separator), newlines, a key name:
    // typed into cat as text, so the file holds exactly this and nothing ran.
    let text = format!(
        "it's \"quoted\" $(touch {}) `touch {}`\nsecond line; Enter C-c\nends with;",
        dollar.display(),
        tick.display()
    );
    let sent = t.run(&["--json", "tmux", "send", ".", "-s", "lit", "--literal", "--enter", "--", &text]);
    sent.status(0);
    assert_eq!(sent.json()["keys"][0], text.as_str());
    assert_eq!((sent.json()["literal"].as_bool(), sent.json()["enter"].as_bool()), (Some(true), Some(true)));
    t.run(&["tmux", "send", ".", "-s", "lit", "C-d"]).status(0);
    let started = Instant::now();
    loop {
        let got = std::fs::read_to_string(&typed).unwrap_or_default();
        if got == format!("{text}\n") {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "typed.txt holds {got:?}, not the text");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!dollar.exists() && !tick.exists(), "a substitution ran");

    // `cmd` types the same way, then Enter: into cat again.
    let typed2 = t.path().join("typed2.txt");
    let cat2 = format!("cat > {}", typed2.display());
    t.run(&["tmux", "run", ".", "-s", "lit2", "--", "sh", "-c", &cat2]).status(0);
    let line = format!("echo $(touch {}) 'x;", dollar.display());
    let sent = t.run(&["tmux", "cmd", ".", "-s", "lit2", &line]);
    sent.status(0);
    assert!(sent.stdout.starts_with("sent to tmux session lit2 on this machine: "), "{}", sent.dump());
    assert!(sent.stdout.ends_with(" + Enter\n"), "{}", sent.dump());
    t.run(&["tmux", "send", ".", "-s", "lit2", "C-d"]).status(0);
    let started = Instant::now();
    while std::fs::read_to_string(&typed2).unwrap_or_default() != format!("{line}\n") {
        assert!(started.elapsed() < Duration::from_secs(10), "typed2.txt is not the line");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!dollar.exists());
}

#[test]
fn key_names_reach_the_program() {
    let t = Local::new("keys");
    t.run(&["tmux", "run", ".", "-s", "keys", "--", "bash", "--norc", "--noprofile", "-i"]).status(0);
    t.until(&["tmux", "capture", ".", "-s", "keys"], "bash-");
    // A word that is no key name is typed; Enter runs the line; C-c stops what runs.
    t.run(&["tmux", "send", ".", "-s", "keys", "sleep 600", "Enter"]).status(0);
    t.until(&["tmux", "capture", ".", "-s", "keys"], "sleep 600");
    std::thread::sleep(Duration::from_millis(300));
    t.run(&["tmux", "send", ".", "-s", "keys", "C-c"]).status(0);
    t.run(&["tmux", "send", ".", "-s", "keys", "--literal", "--enter", "echo after-$((40+2))"]).status(0);
    let pane = t.until(&["tmux", "capture", ".", "-s", "keys"], "\nafter-42\n");
    assert!(pane.stdout.contains("^C"), "{}", pane.dump());
}

#[test]
fn shell_and_attach_return_the_pane_without_a_terminal() {
    let t = Local::new("shell");
    // stdin is not a terminal: no attach, a snapshot of the new session's pane.
    let shell = t.run(&["--json", "tmux", "shell", "."]);
    shell.status(0);
    let json = shell.json();
    assert_eq!((json["session"].as_str(), json["created"].as_bool()), (Some("shell"), Some(true)));
    assert_eq!(json["attached"], false);
    let lines: Vec<&str> = json["lines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert!(lines.iter().any(|l| l.contains('#') || l.contains('$')), "no prompt in {lines:?}");
    // Once it exists, shell uses it.
    let again = t.run(&["--json", "tmux", "shell", "."]);
    assert_eq!(again.json()["created"], false);

    // `cmd` into the shell: its shell runs the line (quotes and all).
    let out = t.path().join("out.txt");
    let line = format!("echo \"a  b\" '$HOME' > {}", out.display());
    t.run(&["tmux", "cmd", ".", "-s", "shell", &line]).status(0);
    wait_for_file(&out);
    let started = Instant::now();
    while std::fs::read_to_string(&out).unwrap() != "a  b $HOME\n" {
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", std::fs::read_to_string(&out));
        std::thread::sleep(Duration::from_millis(50));
    }
    let attach = t.run(&["tmux", "attach", ".", "-s", "shell"]);
    attach.status(0);
    assert!(attach.stdout.contains("a  b"), "{}", attach.dump());
    let capture = t.run(&["tmux", "capture", ".", "-s", "shell"]);
    assert_eq!(capture.stdout, attach.stdout);
    t.run(&["tmux", "attach", ".", "-s", "nope"])
        .status(2)
        .stderr_has(&["there is no tmux session \"nope\" on this machine; sessions there: shell"]);
}

#[test]
fn capture_adds_history_lines() {
    let t = Local::new("hist");
    t.run(&["tmux", "run", ".", "-s", "hist", "--", "sh", "-c", "seq 1 100; exec sleep 600"]).status(0);
    let visible = t.until(&["--json", "tmux", "capture", ".", "-s", "hist"], "\"100\"");
    let lines = |run: &crate::util::Run| -> Vec<String> {
        run.json()["lines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap().to_owned()).collect()
    };
    // The pane's rows, the last line the cursor's blank one (dropped): the last numbers show.
    let shown = lines(&visible);
    assert_eq!(shown.last().map(String::as_str), Some("100"));
    let first: u32 = shown[0].parse().unwrap();
    assert!((70..=90).contains(&first), "{shown:?}");
    // 60 lines of history above them, exactly.
    let more = lines(&t.run(&["--json", "tmux", "capture", ".", "-s", "hist", "--lines", "60"]));
    assert_eq!(more.first().map(String::as_str), Some((first - 60).to_string().as_str()), "{more:?}");
    assert_eq!(more.len(), shown.len() + 60);
}

#[test]
fn bad_input_is_refused_naming_the_argument() {
    let t = Local::new("bad");
    for name in ["a.b", "x:y", "$0", ""] {
        let leaves: [Vec<&str>; 7] = [
            vec!["tmux", "attach", ".", "-s", name],
            vec!["tmux", "shell", ".", "-s", name],
            vec!["tmux", "run", ".", "-s", name, "--", "sleep", "1"],
            vec!["tmux", "cmd", ".", "-s", name, "true"],
            vec!["tmux", "send", ".", "-s", name, "Enter"],
            vec!["tmux", "capture", ".", "-s", name],
            vec!["tmux", "kill", ".", "-s", name],
        ];
        for args in leaves {
            t.run(&args).status(2).stderr_has(&["argument `session`: "]);
        }
    }
    // Nothing was made on the way.
    assert_eq!(t.run(&["tmux", "list", "."]).stdout, "no tmux sessions on this machine\n");
    t.run(&["tmux", "list", ".", "-L", "../x"]).status(2).stderr_has(&["argument `socket`: \"../x\""]);
    t.run(&["tmux", "list", ".", "-i", "2"]).status(2).stderr_has(&["argument `instance`"]);
    t.run(&["tmux", "run", ".", "-s", "a", "--", "A=b"]).status(2).stderr_has(&["argument `command`"]);
    for args in [
        vec!["tmux", "capture", ".", "-s", "nope"],
        vec!["tmux", "send", ".", "-s", "nope", "Enter"],
        vec!["tmux", "cmd", ".", "-s", "nope", "ls"],
        vec!["tmux", "kill", ".", "-s", "nope"],
    ] {
        t.run(&args).status(2).stderr_has(&["there is no tmux session \"nope\" on this machine"]);
    }
    // A session of another name: never matched by prefix.
    t.run(&["tmux", "run", ".", "-s", "nopeish", "--", "sleep", "600"]).status(0);
    t.run(&["tmux", "kill", ".", "-s", "nope"]).status(2).stderr_has(&["sessions there: nopeish"]);
    assert_eq!(names(&t.run(&["--json", "tmux", "list", "."])), ["nopeish"]);
}

#[test]
fn a_final_semicolon_never_starts_another_tmux_command() {
    let t = Local::new("semi");
    t.run(&["tmux", "run", ".", "-s", "semi", "--", "cat"]).status(0);
    // Unescaped, tmux would read `x;` as the end of send-keys and run kill-server.
    t.run(&["tmux", "send", ".", "-s", "semi", "--literal", "x;", "kill-server"]).status(0);
    t.run(&["tmux", "send", ".", "-s", "semi", "y;", "kill-server", "Enter"]).status(0);
    let pane = t.until(&["tmux", "capture", ".", "-s", "semi"], "x;kill-servery;kill-server");
    pane.status(0);
    // A session whose name ends in `;`.
    t.run(&["tmux", "run", ".", "-s", "tail;", "--", "sleep", "600"]).status(0);
    assert_eq!(names(&t.run(&["--json", "tmux", "list", "."])), ["semi", "tail;"]);
    t.run(&["tmux", "kill", ".", "-s", "tail;"]).status(0);
    assert_eq!(names(&t.run(&["--json", "tmux", "list", "."])), ["semi"]);
}

#[test]
fn sockets_name_separate_servers() {
    let t = Local::new("sock");
    let socket = t.socket.clone();
    t.run(&["tmux", "run", ".", "-L", &socket, "-s", "a", "--", "sleep", "600"]).status(0);
    assert_eq!(t.run(&["tmux", "list", "."]).stdout, "no tmux sessions on this machine\n");
    let listed = t.run(&["--json", "tmux", "list", ".", "--socket", &socket]);
    assert_eq!(names(&listed), ["a"]);
    assert_eq!(listed.json()["socket"], socket.as_str());
    let (ok, out) = t.tmux(&["-L", &socket, "list-sessions", "-F", "#{session_name}"]);
    assert!(ok && out == "a\n", "{out}");
    // The hints name the server: run as printed, they work.
    let again = t.run(&["tmux", "run", ".", "-L", &socket, "-s", "a", "--", "sleep", "600"]);
    let kill = format!("charly tmux kill . -L {socket} -s a");
    again.status(2).stderr_has(&[&format!("(`{kill}`)")]);
    let hinted: Vec<&str> = kill.split(' ').skip(1).collect();
    t.run(&hinted).status(0);
    t.run(&["record", "start", ".", "-L", &socket, "-n", "r1"]).status(0);
    let stop = format!("charly record stop . -L {socket} --name r1");
    t.run(&["record", "start", ".", "-L", &socket, "-n", "r1"])
        .status(2)
        .stderr_has(&[&format!("(`{stop}`)")]);
    let hinted: Vec<&str> = stop.split(' ').skip(1).collect();
    t.run(&hinted).status(0);
}

/// Runs `charly <args>` under script(1) (a terminal) with `env`, waits until a tmux client is
/// attached to `session` (`clients` lists them), then detaches it (`detach`): what charly printed.
pub(crate) fn attached(
    env: &std::process::Command,
    dir: &std::path::Path,
    args: &[&str],
    clients: &dyn Fn() -> String,
    detach: &dyn Fn() -> bool,
) -> String {
    let line = std::iter::once(crate::util::CHARLY).chain(args.iter().copied()).collect::<Vec<_>>().join(" ");
    let mut script = Command::new("script");
    script.args(["-qec", &line, "/dev/null"]);
    for (key, value) in env.get_envs() {
        match value {
            Some(v) => script.env(key, v),
            None => script.env_remove(key),
        };
    }
    script.current_dir(dir).stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped());
    let child = script.spawn().unwrap();
    let started = Instant::now();
    while clients().trim().is_empty() {
        assert!(started.elapsed() < Duration::from_secs(20), "no client attached: {args:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(detach(), "detach-client failed");
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    text
}

#[test]
fn attach_and_shell_hand_a_terminal_to_tmux() {
    let t = Local::new("tty");
    t.run(&["tmux", "run", ".", "-s", "att", "--", "sleep", "600"]).status(0);
    for (args, session) in [
        (vec!["tmux", "attach", ".", "-s", "att"], "att"),
        (vec!["tmux", "shell", ".", "-s", "fresh"], "fresh"),
    ] {
        // script(1) gives charly a terminal; the test detaches the client from outside.
        let target = format!("={session}");
        let clients = || {
            let (ok, out) = t.tmux(&["list-clients", "-t", &target, "-F", "#{client_name}"]);
            if ok { out } else { String::new() }
        };
        let text = attached(&t.charly(), &t.work(), &args, &clients, &|| {
            t.tmux(&["detach-client", "-s", &target]).0
        });
        assert!(text.contains(&format!("detached from tmux session {session} on this machine")), "{text}");
    }
    // `shell` made the session it attached to.
    assert_eq!(names(&t.run(&["--json", "tmux", "list", "."])), ["att", "fresh"]);
    // With --json on a terminal it returns the report a tool call gets and attaches nothing
    // (trial 16 L12: it attached and printed no JSON).
    let line = format!("{} --json tmux attach . -s att", crate::util::CHARLY);
    // Bounded: an attach would hold the terminal until the 20 s are up.
    let mut script = Command::new("timeout");
    script.args(["20", "script"]);
    for (key, value) in t.charly().get_envs() {
        match value {
            Some(v) => script.env(key, v),
            None => script.env_remove(key),
        };
    }
    let out = script
        .args(["-qec", &line, "/dev/null"])
        .current_dir(t.work())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    assert!(out.status.success(), "{text}");
    let report: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert!(report.is_object(), "{text}");
    assert!(!text.contains("detached from"), "{text}");
}

#[test]
fn tmux_missing_on_this_machine_names_the_package() {
    let t = Local::new("missing");
    let empty = tempfile::tempdir().unwrap();
    let mut cmd = t.charly();
    cmd.env("PATH", empty.path()).args(["tmux", "list", "."]);
    let run = crate::util::Run::of(&mut cmd, &["tmux", "list", "."]);
    run.status(2).stderr_has(&[
        "tmux is not installed on this machine: install the package tmux (Debian: `apt-get install tmux`)",
    ]);
}
