//! `check.cdp.*` with the box as the target: charly finds `charly-test-desktop`, dials the
//! host port podman published for its 9222, and drives the container's headless Chromium.
//! Each test opens its own tabs (pages as `data:` URLs) and closes them.

use std::time::{Duration, Instant};

use crate::desk::{NAME, data_url, desk, png_pixel};

/// A form: a name typed into `#name`, `#go` writes the greeting into `#out`.
pub(crate) const FORM: &str = "<!doctype html><title>Form</title><body>\
<h1>Sign in</h1><input id=name><button id=go \
onclick=\"out.textContent='Hello, '+document.getElementById('name').value\">Go</button>\
<p id=out>nobody yet</p></body>";

/// Opens `html` in a new tab of the box's browser; its id once the page with `title` loaded.
pub(crate) fn open(html: &str, title: &str) -> String {
    let d = desk();
    let ran = d.run(&["check", "cdp", "open", NAME, &data_url(html)]);
    ran.status(0);
    let id = ran.stdout.rsplit("(tab ").next().unwrap().trim().trim_end_matches(')').to_owned();
    assert!(!id.is_empty() && !id.contains(' '), "{}", ran.stdout);
    let started = Instant::now();
    loop {
        let state = d.run(&["check", "cdp", "eval", NAME, &id, "document.readyState + ' ' + document.title"]);
        if state.code == Some(0) && state.stdout.trim() == format!("complete {title}") {
            return id;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{title} did not load: {}", state.dump());
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `check cdp eval` in the box's tab `tab`: its stdout without the newline.
pub(crate) fn eval(tab: &str, expression: &str) -> String {
    let ran = desk().run(&["check", "cdp", "eval", NAME, tab, expression]);
    ran.status(0).stdout.trim_end_matches('\n').to_owned()
}

fn close(tab: &str) {
    desk().run(&["check", "cdp", "close", NAME, tab]).status(0);
}

#[test]
fn status_and_list_name_the_boxs_browser_and_its_tabs() {
    let d = desk();
    let ran = d.run(&["check", "cdp", "status", NAME]);
    ran.status(0);
    assert!(ran.stdout.starts_with(&format!("CDP:       ok (port {})\n", d.cdp_port)), "{}", ran.stdout);
    let j = d.run(&["check", "cdp", "status", NAME, "--json"]).status(0).json();
    assert_eq!(j["url"], format!("http://127.0.0.1:{}", d.cdp_port), "{j}");
    assert!(j["browser"].as_str().unwrap().starts_with("Chrome/156."), "{j}");

    let tab = open(FORM, "Form");
    let list = d.run(&["check", "cdp", "list", NAME]).status(0).stdout.clone();
    let line = list.lines().find(|l| l.starts_with(&tab)).unwrap_or_else(|| panic!("no {tab} in\n{list}"));
    assert!(line.starts_with(&format!("{tab}\tForm\tdata:text/html")), "{line}");
    let url = d.run(&["check", "cdp", "url", NAME, &tab]).status(0).stdout.clone();
    assert!(url.starts_with("Title: Form\nURL:   data:text/html"), "{url}");
    close(&tab);
    let list = d.run(&["check", "cdp", "list", NAME]).status(0).stdout.clone();
    assert!(!list.contains(&tab), "{list}");
    // Another instance of the box was never started: its container named, and how to start it.
    let ran = d.run(&["check", "cdp", "status", NAME, "-i", "2"]);
    ran.status(2);
    assert!(ran.stderr.contains("container charly-test-desktop-2 does not exist"), "{}", ran.dump());
}

#[test]
fn open_eval_text_type_and_click_fill_in_a_form() {
    let d = desk();
    let tab = open(FORM, "Form");
    assert_eq!(eval(&tab, "document.querySelector('h1').textContent"), "Sign in");
    assert_eq!(eval(&tab, "1 + 2"), "3");
    let text = d.run(&["check", "cdp", "text", NAME, &tab]).status(0).stdout.clone();
    assert!(text.contains("Sign in") && text.contains("nobody yet"), "{text}");

    let typed = d.run(&["check", "cdp", "type", NAME, &tab, "#name", "Ada"]);
    typed.status(0);
    assert_eq!(typed.stdout, "Typed 3 characters into #name\n");
    assert_eq!(eval(&tab, "document.getElementById('name').value"), "Ada");
    let clicked = d.run(&["check", "cdp", "click", NAME, &tab, "#go"]);
    clicked.status(0);
    assert!(clicked.stdout.starts_with("Clicked element at ("), "{}", clicked.stdout);
    assert_eq!(eval(&tab, "out.textContent"), "Hello, Ada");
    let text = d.run(&["check", "cdp", "text", NAME, &tab]).status(0).stdout.clone();
    assert!(text.contains("Hello, Ada") && !text.contains("nobody yet"), "{text}");

    // What the page lacks: errors naming it, and the tab answers after.
    let ran = d.run(&["check", "cdp", "click", NAME, &tab, "#nope", "--timeout", "2s"]);
    assert_eq!(ran.code, Some(2), "{}", ran.dump());
    assert!(ran.stderr.contains("#nope"), "{}", ran.dump());
    let ran = d.run(&["check", "cdp", "eval", NAME, &tab, "null.x"]);
    ran.status(2);
    assert!(ran.stderr.contains("JavaScript threw: TypeError"), "{}", ran.dump());
    assert_eq!(eval(&tab, "document.title"), "Form");
    close(&tab);
}

#[test]
fn screenshot_is_a_png_of_the_page_in_its_colour() {
    let d = desk();
    let tab =
        open("<!doctype html><title>Green</title><body style='margin:0;background:rgb(0,160,80)'>", "Green");
    let file = d.proj().join("page.png");
    let ran = d.run(&["check", "cdp", "screenshot", NAME, &tab, file.to_str().unwrap()]);
    ran.status(0);
    let bytes = std::fs::read(&file).unwrap();
    let (rgb, (w, h)) = png_pixel(&bytes, 20, 20);
    assert!(w >= 200 && h >= 200, "{w}x{h}: {}", ran.stdout);
    assert_eq!(rgb, [0, 160, 80], "pixel (20, 20) of the {w}x{h} screenshot");
    assert_eq!(png_pixel(&bytes, w / 2, h / 2).0, [0, 160, 80]);
    close(&tab);
}
