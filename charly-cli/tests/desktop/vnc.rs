//! `check.vnc.*` with the box as the target: charly dials the host port podman published for
//! the container's 5900, where x11vnc shows Xvfb's `:1` with the kiosk Chromium's desk page.
//! The page's colours are known, and its markers show where the pointer went.

use std::time::{Duration, Instant};

use crate::desk::{BLUE, GREEN, HEIGHT, MAGENTA, NAME, ORANGE, WIDTH, desk, png_pixel, pointer};

/// A VNC screenshot of the box's desktop (PNG bytes), through `check vnc screenshot`.
fn screenshot(file: &str) -> Vec<u8> {
    let d = desk();
    let path = d.proj().join(file);
    let ran = d.run(&["check", "vnc", "screenshot", NAME, path.to_str().unwrap()]);
    ran.status(0);
    assert!(ran.stdout.contains(&format!(" bytes, {WIDTH}x{HEIGHT})")), "{}", ran.stdout);
    std::fs::read(&path).unwrap()
}

/// A point of the desktop and its colour.
type Pixel = ((u32, u32), [u8; 3]);

/// Takes screenshots until each of `want` ((x, y) and its colour) shows, for at most 60 s
/// (Chromium paints, then x11vnc polls the screen); the last screenshot's colours otherwise.
fn shows(file: &str, want: &[Pixel]) -> Result<(), Vec<Pixel>> {
    let started = Instant::now();
    loop {
        let png = screenshot(file);
        let seen: Vec<_> = want.iter().map(|&((x, y), _)| ((x, y), png_pixel(&png, x, y).0)).collect();
        if seen.iter().zip(want).all(|(s, w)| s.1 == w.1) {
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(60) {
            return Err(seen);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn status_and_screenshot_show_the_desk_page() {
    let d = desk();
    let ran = d.run(&["check", "vnc", "status", NAME]);
    ran.status(0);
    assert!(
        ran.stdout.starts_with(&format!("VNC:        ok (127.0.0.1:{})\n", d.vnc_port)),
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.contains(&format!("Size:       {WIDTH}x{HEIGHT}\n")), "{}", ran.stdout);
    assert!(ran.stdout.contains("Security:   None"), "{}", ran.stdout);
    let j = d.run(&["check", "vnc", "status", NAME, "--json"]).status(0).json();
    assert_eq!((j["width"].as_u64(), j["height"].as_u64()), (Some(1280), Some(720)), "{j}");
    // Orange above the band, blue in it: the kiosk's page fills the screen.
    let want = [((640, 100), ORANGE), ((40, 500), ORANGE), ((1200, 650), BLUE), ((40, 700), BLUE)];
    shows("desk.png", &want).unwrap_or_else(|seen| panic!("the desk page never showed: {seen:?}"));
    // Another instance was never started: the container named.
    let ran = d.run(&["check", "vnc", "status", NAME, "-i", "2"]);
    ran.status(2);
    assert!(ran.stderr.contains("charly-test-desktop-2"), "{}", ran.dump());
}

#[test]
fn mouse_and_click_reach_the_page_on_the_desktop() {
    let d = desk();
    let _pointer = pointer();
    let ran = d.run(&["check", "vnc", "mouse", NAME, "300", "300"]);
    ran.status(0);
    assert!(ran.stdout.contains("(300, 300)"), "{}", ran.stdout);
    // The move marker follows the pointer; no press has happened here.
    shows("moved.png", &[((270, 270), GREEN), ((870, 430), ORANGE), ((870, 370), ORANGE)])
        .unwrap_or_else(|seen| panic!("the pointer's move never showed: {seen:?}"));
    let ran = d.run(&["check", "vnc", "click", NAME, "900", "400"]);
    ran.status(0);
    assert!(ran.stdout.contains("Clicked left at (900, 400)"), "{}", ran.stdout);
    shows("clicked.png", &[((870, 430), MAGENTA), ((870, 370), GREEN), ((270, 270), ORANGE)])
        .unwrap_or_else(|seen| panic!("the click never showed: {seen:?}"));
    // A point off the wire: refused before anything is sent.
    let ran = d.run(&["check", "vnc", "mouse", NAME, "70000", "1"]);
    assert_eq!(ran.code, Some(2), "{}", ran.dump());
    assert!(ran.stderr.contains("70000"), "{}", ran.dump());
}
