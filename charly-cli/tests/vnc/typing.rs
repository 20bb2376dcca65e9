//! Text typed with `check.vnc.type` reaches a real X client: `xev` (x11-utils) on Xvfb behind
//! x11vnc prints every KeyPress with the text X's XLookupString makes of it; the test reads
//! that text back. Focus on a bare Xvfb follows the pointer (PointerRoot), so the pointer is
//! moved into xev's window first, over VNC too.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use charly_cli::vnc::{self, Op, Server};

use crate::lab::Lab;

const T: Duration = Duration::from_secs(10);

struct Xev {
    child: Child,
    out: std::path::PathBuf,
}

impl Drop for Xev {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Xev {
    fn start(lab: &Lab, dir: &std::path::Path) -> Xev {
        let out = dir.join("xev.out");
        let child = Command::new("xev")
            .args(["-geometry", "300x300+0+0", "-event", "keyboard"])
            .env("DISPLAY", &lab.display)
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .expect("xev (x11-utils)");
        let xev = Xev { child, out };
        // Mapped and visible (xev's own first lines stay in its stdio buffer until an event).
        let start = Instant::now();
        while !Command::new("xdotool")
            .args(["search", "--onlyvisible", "--name", "Event Tester"])
            .env("DISPLAY", &lab.display)
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
        {
            assert!(start.elapsed() < Duration::from_secs(10), "xev's window never appeared");
            std::thread::sleep(Duration::from_millis(50));
        }
        xev
    }

    fn text(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    fn wait_until(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let t = self.text();
            if ok(&t) {
                return t;
            }
            assert!(start.elapsed() < Duration::from_secs(10), "{what} never showed in xev's output:\n{t}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The text of xev's KeyPress events, in order, and their keysym names.
fn presses(xev_out: &str) -> (String, Vec<String>) {
    let (mut text, mut names) = (String::new(), Vec::new());
    for event in xev_out.split("\n\n").filter(|e| e.trim_start().starts_with("KeyPress event")) {
        if let Some(name) = event.split("(keysym ").nth(1).and_then(|r| r.split(')').next()) {
            names.push(name.split(", ").nth(1).unwrap_or_default().to_owned());
        }
        let looked_up = event.lines().find(|l| l.trim_start().starts_with("XLookupString gives"));
        if let Some(l) = looked_up
            && !l.contains("gives 0 bytes")
            && let Some(q) = l.find('"')
        {
            text.push_str(l[q + 1..].trim_end().trim_end_matches('"'));
        }
    }
    (text, names)
}

#[test]
fn typed_text_reaches_an_x_client() {
    let dir = tempfile::tempdir().unwrap();
    let lab = Lab::x11vnc(640, 480, None);
    let xev = Xev::start(&lab, dir.path());
    let s = Server::new(lab.addr.clone(), ".", vec![".".into()]);
    vnc::perform(&s, None, &Op::Mouse { x: 100, y: 100 }, T).unwrap();
    let typed = "Hi there, VNC_1! ~ok";
    vnc::perform(&s, None, &Op::Type { text: typed.into() }, T).unwrap();
    let out = xev.wait_until("the typed text", |t| presses(t).0.contains(typed));
    let (text, names) = presses(&out);
    assert!(text.ends_with(typed), "xev saw {text:?}");
    // Shifted characters came as such: 'H' and '!' are their own keysyms.
    assert!(names.iter().any(|n| n == "H") && names.iter().any(|n| n == "exclam"), "{names:?}");
    vnc::perform(&s, None, &Op::Key { name: "Return".into() }, T).unwrap();
    xev.wait_until("Return", |t| presses(t).1.iter().any(|n| n == "Return"));
    vnc::perform(&s, None, &Op::Type { text: "a\tb".into() }, T).unwrap();
    let out =
        xev.wait_until("a, Tab, b", |t| presses(t).1.ends_with(&["a".into(), "Tab".into(), "b".into()]));
    assert!(presses(&out).1.contains(&"Tab".to_owned()));
}

/// Back-to-back calls, each its own connection, arrive in call order (trial 2, H1): x11vnc
/// reads a client's events after its socket closed, one at a time between the next client's,
/// so without a round trip at the end of each call the next call's keys overtook the last
/// ones of a long `type` (xev saw `... f g Shift E h Shift N i ...`). Each call now returns
/// only once the server answered a FramebufferUpdateRequest sent after its events.
#[test]
fn back_to_back_calls_arrive_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let lab = Lab::x11vnc(640, 480, None);
    let xev = Xev::start(&lab, dir.path());
    let s = Server::new(lab.addr.clone(), ".", vec![".".into()]);
    vnc::perform(&s, None, &Op::Mouse { x: 100, y: 100 }, T).unwrap();
    let long = "abcdefghij".repeat(100);
    let mut expected = Vec::new();
    for _ in 0..2 {
        vnc::perform(&s, None, &Op::Type { text: long.clone() }, T).unwrap();
        vnc::perform(&s, None, &Op::Key { name: "BackSpace".into() }, T).unwrap();
        vnc::perform(&s, None, &Op::Type { text: "xyz".into() }, T).unwrap();
        vnc::perform(&s, None, &Op::Key { name: "Return".into() }, T).unwrap();
        expected.extend(long.chars().map(String::from));
        expected.push("BackSpace".into());
        expected.extend("xyz".chars().map(String::from));
        expected.push("Return".into());
    }
    let out = xev.wait_until("every key", |t| presses(t).1.len() >= expected.len());
    let seen = presses(&out).1;
    let first_wrong = seen.iter().zip(&expected).position(|(a, b)| a != b);
    assert_eq!(first_wrong, None, "xev saw the keys out of order: {}", seen.join(" "));
    assert_eq!(seen.len(), expected.len());
}
