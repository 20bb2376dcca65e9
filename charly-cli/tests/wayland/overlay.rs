//! `check.wl.overlay.*` on `.`: charly-overlay (this workspace's program, built here once per
//! test binary with `cargo build -p charly-overlay`) on the PATH charly and the desktop's user
//! see; each kind seen in grim's screenshot where the daemon says it is, listed, hidden;
//! countdown and fade gone by themselves. The daemon charly starts exits with the test's sway.

use std::time::{Duration, Instant};

use crate::desk::{Desk, png_pixel};
pub(crate) use crate::lab::overlay_dir;
use crate::util::Run;

/// `charly check wl overlay <args>` with charly-overlay on PATH.
fn ov(d: &Desk, args: &[&str]) -> Run {
    let mut cmd = d.charly();
    cmd.env("PATH", format!("{}:/usr/bin:/bin", overlay_dir().display()));
    let all: Vec<&str> = ["check", "wl", "overlay"].iter().chain(args).copied().collect();
    cmd.args(&all);
    Run::of(&mut cmd, &all)
}

/// `overlay show . ARGS --json`'s overlay (x, y, width, height).
#[track_caller]
fn show(d: &Desk, args: &[&str]) -> (u32, u32, u32, u32) {
    let mut all = vec!["show", "."];
    all.extend(args);
    all.push("--json");
    let run = ov(d, &all);
    run.status(0);
    let o = &run.json()["overlays"][0];
    let n = |k: &str| o[k].as_u64().unwrap_or_else(|| panic!("{k} in {o}")) as u32;
    (n("x"), n("y"), n("width"), n("height"))
}

/// A screenshot of the desktop (PNG bytes).
fn shot(d: &Desk) -> Vec<u8> {
    let file = d.dir().join("overlay-shot.png");
    d.wl(&["screenshot", ".", file.to_str().unwrap()]).status(0);
    std::fs::read(file).unwrap()
}

/// How many pixels of `rect` in `png` are `rgb` (the PNG decoded once).
fn count(png: &[u8], (x, y, w, h): (u32, u32, u32, u32), rgb: [u8; 3]) -> usize {
    let mut reader = png::Decoder::new(std::io::Cursor::new(png)).read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).expect("a PNG frame");
    let samples = info.color_type.samples();
    let mut n = 0;
    for yy in y..y + h {
        for xx in x..x + w {
            let at = yy as usize * info.line_size + xx as usize * samples;
            if buf[at..at + 3] == rgb {
                n += 1;
            }
        }
    }
    n
}

#[test]
fn each_overlay_is_drawn_where_it_is_listed_and_hiding_removes_it() {
    let d = Desk::start();
    let status = ov(&d, &["status", ".", "--json"]);
    assert_eq!(status.status(0).json()["running"], false, "{}", status.dump());
    // Bad input first: refused before a daemon starts.
    ov(&d, &["show", ".", "--type", "text"]).status(2).stderr_has(&["--type text needs --text"]);
    ov(&d, &["show", ".", "--type", "text", "--text", "x", "--bg", "purple-ish"])
        .status(2)
        .stderr_has(&["\"purple-ish\" is not a colour"]);
    ov(&d, &["show", ".", "--type", "highlight", "--region", "1,2,3"]).status(2).stderr_has(&["X,Y,W,H"]);
    assert_eq!(ov(&d, &["status", ".", "--json"]).json()["running"], false);

    let text = show(&d, &["--type", "text", "--text", "Hello $(x) `y`", "--bg", "#0000ff", "--name", "t"]);
    let third =
        show(&d, &["--type", "lower-third", "--text", "Jane", "--subtitle", "Eng", "--bg", "#00ff00"]);
    let mark = show(&d, &["--type", "watermark", "--text", "DRAFT", "--bg", "#ff0000", "--opacity", "1"]);
    let high = show(&d, &["--type", "highlight", "--region", "100,120,300,200", "--color", "#ff00ff"]);
    assert_eq!(high, (100, 120, 300, 200));
    // Where they should be: text centred, lower-third bottom left, watermark bottom right.
    let centre = (text.0 + text.2 / 2, text.1 + text.3 / 2);
    assert!(centre.0.abs_diff(960) <= 1 && centre.1.abs_diff(540) <= 1, "{text:?}");
    assert_eq!((third.0, third.1 + third.3), (40, 1080 - 40), "{third:?}");
    assert_eq!((mark.0 + mark.2, mark.1 + mark.3), (1920 - 40, 1080 - 40), "{mark:?}");
    let png = shot(&d);
    assert_eq!(png_pixel(&png, text.0 + 2, text.1 + 2).0, [0, 0, 255]);
    assert!(count(&png, text, [255, 255, 255]) > 20, "the text is drawn in white");
    assert_eq!(png_pixel(&png, third.0 + 2, third.1 + 2).0, [0, 255, 0]);
    assert_eq!(png_pixel(&png, mark.0 + 2, mark.1 + 2).0, [255, 0, 0]);
    assert_eq!(png_pixel(&png, 101, 121).0, [255, 0, 255], "the highlight's frame");
    assert_ne!(png_pixel(&png, 250, 220).0, [255, 0, 255], "a light fill inside, not the frame colour");

    let list = ov(&d, &["list", "."]);
    list.status(0);
    for want in ["t\ttext\t", "lower-third-", "watermark-", "highlight-"] {
        assert!(list.stdout.contains(want), "{want}: {}", list.dump());
    }
    assert!(list.stdout.contains("\"Hello $(x) `y`\""), "{}", list.dump());
    let status = ov(&d, &["status", ".", "--json"]).json();
    assert_eq!(status["running"], true);
    assert_eq!(status["output"], "HEADLESS-1 1920x1080");
    assert_eq!(status["overlays"].as_array().unwrap().len(), 4);

    // Showing a name again replaces it.
    show(&d, &["--type", "text", "--text", "Again", "--bg", "#0000ff", "--name", "t"]);
    assert_eq!(ov(&d, &["list", ".", "--json"]).json()["overlays"].as_array().unwrap().len(), 4);
    let run = ov(&d, &["hide", ".", "--name", "t"]);
    assert_eq!(run.status(0).stdout, "Hid t (text)\n");
    let png = shot(&d);
    assert_ne!(png_pixel(&png, text.0 + 2, text.1 + 2).0, [0, 0, 255], "the text overlay is gone");
    assert_eq!(png_pixel(&png, 101, 121).0, [255, 0, 255], "the others stay");
    ov(&d, &["hide", ".", "--name", "t"]).status(2).stderr_has(&["no overlay named \"t\""]);
    ov(&d, &["show", ".", "--type", "highlight", "--region", "1900,10,100,100"])
        .status(2)
        .stderr_has(&["is off the output (1920x1080)"]);
    let hidden = ov(&d, &["hide", ".", "--all", "--json"]);
    assert_eq!(hidden.status(0).json()["overlays"].as_array().unwrap().len(), 3);
    let png = shot(&d);
    assert_ne!(png_pixel(&png, 101, 121).0, [255, 0, 255]);
    assert_ne!(png_pixel(&png, third.0 + 2, third.1 + 2).0, [0, 255, 0]);
    assert_eq!(ov(&d, &["list", ".", "--json"]).json()["overlays"], serde_json::json!([]));
    d.wl(&["status", "."]).status(0);
}

#[test]
fn countdown_and_fade_end_by_themselves() {
    let d = Desk::start();
    let started = Instant::now();
    let cd = show(&d, &["--type", "countdown", "--seconds", "2", "--bg", "#00ffff"]);
    let png = shot(&d);
    assert_eq!(png_pixel(&png, cd.0 + 2, cd.1 + 2).0, [0, 255, 255], "the countdown is shown");
    assert!(count(&png, cd, [255, 255, 255]) > 50, "its number is drawn");
    let listed = ov(&d, &["list", ".", "--json"]).json();
    let left = listed["overlays"][0]["remaining_ms"].as_u64().unwrap();
    assert!(left <= 2000 && left > 0, "{listed}");
    d.wait("the countdown to end", Duration::from_secs(5), || {
        ov(&d, &["list", ".", "--json"]).json()["overlays"] == serde_json::json!([])
    });
    assert!(started.elapsed() >= Duration::from_secs(2));
    assert_ne!(png_pixel(&shot(&d), cd.0 + 2, cd.1 + 2).0, [0, 255, 255]);

    // A fade over 8 s: full from 2 s to 6 s (a quarter of it each way), then gone. The full
    // stretch is long enough for a screenshot on a loaded machine (one takes up to ~1.5 s).
    let started = Instant::now();
    let fade = show(&d, &["--type", "fade", "--duration", "8", "--bg", "#ff00ff"]);
    assert_eq!(fade, (0, 0, 1920, 1080));
    let mut full = false;
    while started.elapsed() < Duration::from_millis(5800) && !full {
        full = png_pixel(&shot(&d), 960, 540).0 == [255, 0, 255];
    }
    assert!(full, "the output is covered in the fade's colour at its height");
    d.wait("the fade to end", Duration::from_secs(10), || {
        ov(&d, &["list", ".", "--json"]).json()["overlays"] == serde_json::json!([])
    });
    assert!(started.elapsed() >= Duration::from_secs(8));
    assert_ne!(png_pixel(&shot(&d), 960, 540).0, [255, 0, 255]);
    d.wl(&["status", "."]).status(0);
}

#[test]
fn a_target_without_charly_overlay_says_how_to_get_it() {
    let d = Desk::start();
    let mut cmd = d.charly();
    cmd.env("PATH", "/usr/bin:/bin").args(["check", "wl", "overlay", "show", ".", "--type", "fade"]);
    let run = Run::of(&mut cmd, &["check wl overlay show . (no charly-overlay)"]);
    run.status(2).stderr_has(&[
        "check.wl.overlay.show needs charly-overlay, which is not installed on this machine",
        "cargo build -p charly-overlay",
    ]);
}
