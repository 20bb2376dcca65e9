//! `record.*` on this machine: asciinema in a tmux session of the test's private server; the
//! cast copied out and read back as asciicast v2.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use crate::local::Local;

/// An asciicast v2 file (https://docs.asciinema.org/manual/asciicast/v2/): its header and the
/// text of its output events, checked line by line.
pub(crate) fn read_cast(path: &Path) -> (serde_json::Value, String) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().expect("a header line")).unwrap();
    assert_eq!(header["version"], 2, "{header}");
    assert!(header["width"].as_u64().unwrap() > 0 && header["height"].as_u64().unwrap() > 0, "{header}");
    assert!(header["timestamp"].as_u64().is_some(), "{header}");
    let mut output = String::new();
    let mut last = 0.0;
    for line in lines {
        let event: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let time = event[0].as_f64().unwrap_or_else(|| panic!("no time: {line}"));
        assert!(time >= last, "events out of order: {line}");
        last = time;
        assert!(["o", "i", "r", "m"].contains(&event[1].as_str().unwrap()), "{line}");
        if event[1] == "o" {
            output.push_str(event[2].as_str().unwrap());
        }
    }
    (header, output)
}

#[test]
fn a_terminal_recording_reads_back_as_asciicast_v2() {
    let t = Local::new("rec");
    let started = t.run(&["--json", "record", "start", "."]);
    started.status(0);
    let json = started.json();
    let file = t.path().join("run/charly-recordings/default.cast");
    assert_eq!(json["file"], file.display().to_string());
    assert_eq!((json["mode"].as_str(), json["tool"].as_str()), (Some("terminal"), Some("asciinema")));
    assert_eq!(json["session"], "record-default");
    // A second start of the same recording: refused, the first one untouched.
    t.run(&["record", "start", "."]).status(2).stderr_has(&[
        "recording \"default\" was started already: stop it first (`charly record stop . --name default`)",
    ]);
    let listed = t.run(&["--json", "record", "list", "."]);
    let recordings = &listed.json()["recordings"];
    assert_eq!(recordings.as_array().unwrap().len(), 1, "{recordings}");
    assert_eq!(recordings[0]["name"], "default");
    assert_eq!(recordings[0]["mode"], "terminal");
    assert_eq!(recordings[0]["file"], file.display().to_string());
    assert_eq!(recordings[0]["running"], true);
    assert_eq!(t.run(&["record", "list", "."]).stdout, format!("default\tterminal\t{}\n", file.display()));

    let line = "echo \"rec-$((6*7))\" 'q' `echo tick`";
    let sent = t.run(&["record", "cmd", ".", line]);
    sent.status(0);
    t.until(&["tmux", "capture", ".", "-s", "record-default"], "\nrec-42 q tick\n");
    let stopped = t.run(&["--json", "record", "stop", ".", "--output", "out.cast"]);
    stopped.status(0);
    let json = stopped.json();
    // Ended by itself (`clean`: not killed at the limit); status 0, or none when tmux left the
    // exited recorder unreaped (record.rs `Ended`).
    assert_eq!(json["clean"].as_bool(), Some(true), "{json}");
    assert!(matches!(json["exit_status"].as_i64(), Some(0) | None), "{json}");
    assert_eq!(json["output"], "out.cast");
    let copy = t.work().join("out.cast");
    let bytes = std::fs::metadata(&copy).unwrap().len();
    assert_eq!(json["bytes"].as_u64(), Some(bytes));
    let (header, output) = read_cast(&copy);
    assert_eq!(header["env"]["SHELL"], "/bin/bash", "{header}");
    assert!(output.contains("rec-42 q tick"), "{output:?}");
    // The copy is the file the recorder wrote, which stays where it was.
    assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&file).unwrap());
    // Nothing is left running.
    assert_eq!(t.run(&["record", "list", "."]).stdout, "no recordings on this machine\n");
    assert_eq!(t.run(&["tmux", "list", "."]).stdout, "no tmux sessions on this machine\n");
    t.run(&["record", "stop", "."])
        .status(2)
        .stderr_has(&["no recording \"default\" runs on this machine; none runs there"]);
}

#[test]
fn a_recorder_killed_before_the_stop_fails_the_stop() {
    let t = Local::new("i16f-kill");
    t.run(&["record", "start", ".", "-n", "killed"]).status(0);
    let (ok, pid) = t.tmux(&["display-message", "-p", "-t", "=record-killed:", "#{pane_pid}"]);
    assert!(ok, "{pid}");
    let killed = std::process::Command::new("kill").args(["-s", "KILL", pid.trim()]).status().unwrap();
    assert!(killed.success());
    t.until(&["record", "list", "."], "killed\tterminal\t");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let stopped = t.run(&["--json", "record", "stop", ".", "-n", "killed", "-o", "killed.cast"]);
    stopped.status(1).stderr_has(&["recording killed did not end cleanly", "may be incomplete"]);
    assert_eq!(stopped.json()["clean"], false);
}

#[test]
fn bad_input_changes_nothing() {
    let t = Local::new("recbad");
    for name in ["a b", "../x", "-x", ""] {
        let flag = format!("--name={name}");
        t.run(&["record", "start", ".", &flag]).status(2).stderr_has(&["argument `name`: "]);
    }
    t.run(&["record", "cmd", ".", "ls"])
        .status(2)
        .stderr_has(&["no recording \"default\" runs on this machine"]);

    t.run(&["record", "start", ".", "-n", "keep"]).status(0);
    // An output that cannot be written is refused before the recording stops.
    t.run(&["record", "stop", ".", "-n", "keep", "-o", "missing/dir/x.cast"])
        .status(2)
        .stderr_has(&["argument `output`: the directory of missing/dir/x.cast does not exist"]);
    std::fs::create_dir(t.work().join("adir")).unwrap();
    t.run(&["record", "stop", ".", "-n", "keep", "-o", "adir"])
        .status(2)
        .stderr_has(&["argument `output`: adir is a directory"]);
    t.run(&["record", "stop", ".", "-n", "other"])
        .status(2)
        .stderr_has(&["no recording \"other\" runs on this machine; recordings there: keep"]);
    let listed = t.run(&["--json", "record", "list", "."]);
    assert_eq!(listed.json()["recordings"][0]["running"], true, "{}", listed.dump());
    t.run(&["record", "stop", ".", "-n", "keep", "-o", "adir/keep.cast"]).status(0);
    assert!(std::fs::metadata(t.work().join("adir/keep.cast")).unwrap().len() > 0);
    // No temporary files beside the copy.
    let names: Vec<String> = std::fs::read_dir(t.work().join("adir"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["keep.cast"]);

    // A desktop recording with no compositor: the error says where charly looked; nothing runs.
    t.run(&["record", "start", ".", "-m", "desktop"])
        .status(2)
        .stderr_has(&["no Wayland compositor for this machine"]);
    // No asciinema: the error names it and its package; nothing runs.
    let bin = t.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink("/usr/bin/tmux", bin.join("tmux")).unwrap();
    let mut cmd = t.charly();
    cmd.env("PATH", &bin).args(["record", "start", "."]);
    crate::util::Run::of(&mut cmd, &["record", "start", "."]).status(2).stderr_has(&[
        "asciinema is not installed on this machine (for terminal recordings): install the package asciinema",
    ]);
    let mut cmd = t.charly();
    cmd.env("PATH", &bin).args(["record", "start", ".", "-m", "desktop"]);
    crate::util::Run::of(&mut cmd, &["record", "start", ".", "-m", "desktop"]).status(2).stderr_has(&[
        "wf-recorder is not installed on this machine (for desktop recordings): install the package wf-recorder",
    ]);
    assert_eq!(t.run(&["tmux", "list", "."]).stdout, "no tmux sessions on this machine\n");
}

#[test]
fn the_local_recordings_directory_must_be_private() {
    let t = Local::new("recdir");
    let dir = t.path().join("run/charly-recordings");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    t.run(&["record", "start", "."]).status(2).stderr_has(&["is not a private directory"]);
    assert_eq!(t.run(&["tmux", "list", "."]).stdout, "no tmux sessions on this machine\n");
}
