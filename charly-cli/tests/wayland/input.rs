//! Typing, keys, combos, the clipboard and the pointer on `.`, read back from real windows:
//! foot running `tee FILE` writes what it was typed into a file; a double-click or a drag in
//! foot selects text, which is the primary selection; xev logs where a click landed.

use std::time::Duration;

use crate::desk::{Desk, HEIGHT, WIDTH};

/// foot `app_id` running `tee HOME/<file>`: what is typed into it lands in the file, line by line.
/// The first line [`tee`] types, once the window has the keyboard.
const READY: &str = "ready\n";

/// A foot window running `tee FILE`, focused, which has received a first line ([`READY`]):
/// under load the window can be mapped and focused before the keyboard focus reaches foot, and
/// what is typed then is lost. What was typed after it: [`after_ready`].
fn tee(d: &Desk, app_id: &str, file: &str) {
    let path = d.home().join(file);
    d.foot(app_id, &["tee", &path.display().to_string()]);
    d.wl(&["focus", ".", app_id]).status(0);
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        d.wl(&["type", ".", READY]).status(0);
        for _ in 0..10 {
            if std::fs::read_to_string(&path).is_ok_and(|t| t.ends_with(READY)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(std::time::Instant::now() < deadline, "foot {app_id} never got what was typed");
    }
}

/// `text` after the last [`READY`] line.
fn after_ready(text: &str) -> &str {
    text.rsplit_once(READY).map_or(text, |(_, after)| after)
}

#[test]
fn text_with_quotes_command_substitution_backticks_and_newlines_is_typed_literally() {
    let d = Desk::start();
    tee(&d, "typed", "typed.txt");
    let pwned = d.home().join("pwned");
    let text = format!(
        "it's \"quoted\" $(touch {p}) `touch {p}` ; touch {p} & \\ $HOME\nsecond line\n",
        p = pwned.display()
    );
    let run = d.wl(&["type", ".", &text]);
    run.status(0);
    assert!(run.stdout.contains(&format!("Typed {} characters", text.chars().count())), "{}", run.dump());
    assert_eq!(after_ready(&d.file_with("typed.txt", "second line\n")), text);
    std::thread::sleep(Duration::from_millis(300));
    assert!(!pwned.exists(), "the text was executed somewhere");
    // An empty text is refused; the desktop keeps running.
    d.wl(&["type", ".", ""]).status(2).stderr_has(&["the text is empty"]);
    d.wl(&["status", "."]).status(0);
}

#[test]
fn a_typed_command_and_the_return_key_run_in_the_terminal() {
    let d = Desk::start();
    d.foot("shell", &["sh"]);
    d.wl(&["focus", ".", "shell"]).status(0);
    let target = d.home().join("ran.txt").display().to_string();
    d.wl(&["type", ".", &format!("echo typed-by-charly > {target}")]).status(0);
    let run = d.wl(&["key", ".", "Return"]);
    run.status(0);
    assert_eq!(run.stdout, "Pressed key Return\n");
    assert_eq!(d.file_with("ran.txt", "typed-by-charly"), "typed-by-charly\n");
}

#[test]
fn a_key_outside_the_xkb_table_is_refused_with_the_nearest_name() {
    let d = Desk::start();
    let run = d.wl(&["key", ".", "Retrun"]);
    run.status(2).stderr_has(&[
        "key \"Retrun\" is not a key name",
        "did you mean Return?",
        "Page_Up, Page_Down",
    ]);
    d.wl(&["key", ".", "page_up"]).status(2).stderr_has(&["did you mean Page_Up?"]);
    d.wl(&["key-combo", ".", "ctrl+shift"]).status(2).stderr_has(&["has no key", "ctrl+shift+t"]);
    d.wl(&["key-combo", ".", "hyper+t"])
        .status(2)
        .stderr_has(&["\"hyper\" is not a modifier", "ctrl, control"]);
    d.wl(&["key-combo", ".", "ctrl++t"]).status(2).stderr_has(&["no empty part"]);
    d.wl(&["status", "."]).status(0);
}

#[test]
fn a_key_combo_reaches_the_window_with_its_modifiers() {
    let d = Desk::start();
    tee(&d, "combo", "combo.txt");
    // ctrl+u is the terminal's kill-line: the first word never reaches tee.
    d.wl(&["type", ".", "discarded"]).status(0);
    let run = d.wl(&["key-combo", ".", "ctrl+u"]);
    run.status(0);
    assert_eq!(run.stdout, "Pressed ctrl+u\n");
    d.wl(&["type", ".", "kept"]).status(0);
    d.wl(&["key", ".", "Return"]).status(0);
    assert_eq!(after_ready(&d.file_with("combo.txt", "kept")), "kept\n");
}

#[test]
fn the_clipboard_and_the_primary_selection_are_set_read_and_cleared() {
    let d = Desk::start();
    let text = "line \"one\" $(x)\nline two";
    d.wl(&["clipboard", ".", "set", text]).status(0);
    let got = d.wl(&["clipboard", ".", "get"]);
    got.status(0);
    assert_eq!(got.stdout, text);
    d.wl(&["clipboard", ".", "set", "primary text", "--primary"]).status(0);
    assert_eq!(d.wl(&["clipboard", ".", "get", "--primary"]).stdout, "primary text");
    assert_eq!(d.wl(&["clipboard", ".", "get"]).stdout, text, "the clipboard is its own");
    d.wl(&["clipboard", ".", "clear"]).status(0);
    assert_eq!(d.wl(&["clipboard", ".", "get"]).stdout, "");
    d.wl(&["clipboard", ".", "set"]).status(2).stderr_has(&["clipboard set needs the text"]);
}

/// foot `app_id` showing `word` on its first line (then waiting on cat).
fn word_window(d: &Desk, app_id: &str, word: &str) {
    d.foot(app_id, &["sh", "-c", &format!("echo {word}; exec cat")]);
    std::thread::sleep(Duration::from_millis(300));
}

#[test]
fn a_double_click_relative_to_a_window_selects_the_word_under_it() {
    let d = Desk::start();
    word_window(&d, "words", "charlyword");
    d.wl(&["clipboard", ".", "clear", "--primary"]).status(0);
    let run = d.wl(&["double-click", ".", "--from-sway", "words", "20", "5"]);
    run.status(0);
    let window = d.window("words").unwrap();
    let (x, y) = (window["x"].as_i64().unwrap() + 20, window["y"].as_i64().unwrap() + 5);
    assert_eq!(run.stdout, format!("Double-clicked left at ({x}, {y})\n"));
    d.wait("the word selected", Duration::from_secs(5), || {
        d.wl(&["clipboard", ".", "get", "--primary"]).stdout == "charlyword"
    });
}

#[test]
fn a_click_focuses_the_window_under_it_and_the_focus_follows_the_pointer() {
    let d = Desk::start();
    word_window(&d, "left", "left-window");
    word_window(&d, "right", "right-window");
    d.wl(&["focus", ".", "left"]).status(0);
    let right = d.window("right").unwrap();
    let (rx, ry) =
        ((right["x"].as_i64().unwrap() + 50).to_string(), (right["y"].as_i64().unwrap() + 50).to_string());
    let run = d.wl(&["click", ".", &rx, &ry]);
    run.status(0);
    assert_eq!(run.stdout, format!("Clicked left at ({rx}, {ry})\n"));
    assert_eq!(d.window("right").unwrap()["focused"], true);
    // sway's focus follows the mouse.
    d.wl(&["mouse", ".", "--from-sway", "left", "100", "100"]).status(0);
    d.wait("focus back on left", Duration::from_secs(5), || d.window("left").unwrap()["focused"] == true);
}

#[test]
fn scrolling_moves_the_terminal_back_through_its_scrollback() {
    let d = Desk::start();
    d.foot("scroll", &["sh", "-c", "seq 1 400; exec cat"]);
    std::thread::sleep(Duration::from_millis(500));
    let w = d.window("scroll").unwrap();
    let region = format!("{},{} 200x200", w["x"], w["y"]);
    let before = d.dir().join("before.png");
    d.wl(&["screenshot", ".", before.to_str().unwrap(), "--region", &region]).status(0);
    let run = d.wl(&["scroll", ".", "--from-sway", "scroll", "100", "100", "up", "--amount", "10"]);
    run.status(0);
    assert!(run.stdout.starts_with("Scrolled up 10 at "), "{}", run.dump());
    std::thread::sleep(Duration::from_millis(300));
    let after = d.dir().join("after.png");
    d.wl(&["screenshot", ".", after.to_str().unwrap(), "--region", &region]).status(0);
    assert_ne!(std::fs::read(&before).unwrap(), std::fs::read(&after).unwrap(), "the view did not move");
    d.wl(&["scroll", ".", "10", "10", "up", "--amount", "0"]).status(2).stderr_has(&["at least 1"]);
}

#[test]
fn a_point_off_the_output_is_refused_with_the_output_size() {
    let d = Desk::start();
    let size = format!("HEADLESS-1 is {WIDTH}x{HEIGHT} at 0,0 (x 0-1919, y 0-1079)");
    d.wl(&["click", ".", "1920", "10"])
        .status(2)
        .stderr_has(&["the point (1920, 10) is off the output", &size]);
    d.wl(&["mouse", ".", "--", "-1", "5"]).status(2).stderr_has(&["(-1, 5) is off the output"]);
    d.wl(&["drag", ".", "10", "10", "10", "5000"])
        .status(2)
        .stderr_has(&["drag: the end (10, 5000) is off the output"]);
    d.foot("small", &[]);
    d.wl(&["click", ".", "--from-sway", "small", "3000", "3000"])
        .status(2)
        .stderr_has(&["(3000, 3000) is outside window #", "app_id small"]);
    d.wl(&["click", ".", "--from-sway", "nosuch", "3", "3"])
        .status(2)
        .stderr_has(&["no window matches \"nosuch\"", "small"]);
    d.wl(&["status", "."]).status(0);
}
