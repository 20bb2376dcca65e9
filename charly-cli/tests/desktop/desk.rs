//! The shared box: project, build and container, made once per test binary.
//!
//! Box `test-desktop` (container `charly-test-desktop`) on `localhost/charly-desktop` has
//! candy `desk` (the supervisord programs, its ports, the bus address) and candy `desk-plan`
//! (no programs; `plan.rs` writes its checks). Two Chromiums run: a headless one whose
//! DevTools (bound to 127.0.0.1:9223 whatever `--remote-debugging-address` says) socat
//! forwards on 9222, for the `cdp` tests, whose tabs open in parallel; and a kiosk one on
//! Xvfb's `:1`, which x11vnc shows on 5900, with one fixed page ([`DESK_PAGE`]). Tabs opened
//! over CDP in a windowed Chromium come to the front, so with one browser a `vnc` test could
//! see whatever page a `cdp` test opened last; with two, the desktop only ever shows the desk
//! page, and the colours the `vnc` tests read there are known.
//!
//! The container is removed when the test binary ends, however it ends: a watcher process
//! (`tail --pid`) waits for this process and then removes the container and the image by the
//! ids this run recorded (never a later run's of the same names), and the project directory.
//! A run killed before it recorded them leaves them by name, and the next run removes them
//! first.

use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::util::{Box, Run, free_port, record};

/// The box.
pub(crate) const NAME: &str = "test-desktop";

/// Its container.
pub(crate) const CONTAINER: &str = "charly-test-desktop";

/// The base image `scripts/runtimes.sh` builds (bookworm minbase, supervisor, dbus,
/// Chromium, Xvfb, x11vnc, socat, fonts).
const DESKTOP: &str = "localhost/charly-desktop:latest";

/// The desktop's size.
pub(crate) const WIDTH: u32 = 1280;
/// The desktop's height.
pub(crate) const HEIGHT: u32 = 720;

/// The page background above the band.
pub(crate) const ORANGE: [u8; 3] = [255, 128, 0];
/// The band at y 600-719.
pub(crate) const BLUE: [u8; 3] = [0, 64, 255];
/// The marker that follows the pointer: 20×20, its top left 40 px up and left of it.
pub(crate) const GREEN: [u8; 3] = [0, 200, 0];
/// The marker a button press leaves: 20×20, 40 px left of and 20 px below the press.
pub(crate) const MAGENTA: [u8; 3] = [200, 0, 200];

/// The kiosk's page: orange, a blue band at the bottom, and two markers moved by the
/// pointer's events (so a VNC screenshot shows where the pointer went and where it pressed).
const DESK_PAGE: &str = "<!doctype html><html><head><title>Desk</title><style>\
body{margin:0;background:rgb(255,128,0);overflow:hidden}\
div{position:fixed;width:20px;height:20px;left:-100px;top:0}\
</style></head><body>\
<div id=band style='left:0;top:600px;width:100%;height:120px;background:rgb(0,64,255)'></div>\
<div id=m style='background:rgb(0,200,0)'></div><div id=c style='background:rgb(200,0,200)'></div>\
<script>\
onmousemove=e=>{m.style.left=(e.clientX-40)+'px';m.style.top=(e.clientY-40)+'px'};\
onmousedown=e=>{c.style.left=(e.clientX-40)+'px';c.style.top=(e.clientY+20)+'px'};\
</script></body></html>";

/// Waits until `/tmp/.X11-unix/X1` exists, then runs `what` (supervisord starts its
/// programs together; x11vnc and a windowed Chromium exit without a display).
fn on_display(what: &str) -> String {
    format!("sh -c 'until [ -e /tmp/.X11-unix/X1 ]; do sleep 0.1; done; exec {what}'")
}

/// Candy `desk`: the programs, the ports, the session bus address.
fn desk_candy() -> String {
    let chrome = "chromium --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
                  --no-default-browser-check --password-store=basic";
    let programs = [
        ("dbus", "dbus-daemon --session --nofork --address=unix:path=/run/bus".to_owned(), ""),
        ("xvfb", format!("Xvfb :1 -screen 0 {WIDTH}x{HEIGHT}x24 -nolisten tcp"), ""),
        ("x11vnc", on_display("x11vnc -display :1 -forever -shared -nopw -rfbport 5900 -quiet"), ""),
        (
            "kiosk",
            on_display(&format!(
                "{chrome} --user-data-dir=/tmp/chrome-kiosk --kiosk --window-position=0,0 \
                 --window-size={WIDTH},{HEIGHT} {}",
                data_url(DESK_PAGE)
            )),
            ", env: [DISPLAY=:1]",
        ),
        (
            "chromium",
            format!(
                "{chrome} --headless=new --remote-debugging-port=9223 --user-data-dir=/tmp/chrome about:blank"
            ),
            "",
        ),
        ("devtools", "socat TCP-LISTEN:9222,fork,reuseaddr TCP:127.0.0.1:9223".to_owned(), ""),
    ];
    let mut text = String::from(
        "desk:\n  candy: {description: \"Xvfb, x11vnc, Chromium (kiosk and headless) and a session bus\"}\n\
         desk-svc:\n  service:\n",
    );
    for (name, command, extra) in programs {
        text.push_str(&format!("    - {{name: {name}, command: {}{extra}}}\n", json(&command)));
    }
    text.push_str("desk-port:\n  port: [5900, 9222]\n");
    text.push_str("desk-env:\n  env: [DBUS_SESSION_BUS_ADDRESS=unix:path=/run/bus]\n");
    text
}

/// A YAML double-quoted scalar (JSON's string syntax is one).
pub(crate) fn json(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// A `data:` URL of `html` (ASCII), every byte but unreserved ones percent-encoded (no quoting
/// needed in a shell or supervisord command line).
pub(crate) fn data_url(html: &str) -> String {
    let mut url = String::from("data:text/html,");
    for b in html.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            url.push(b as char);
        } else {
            url.push_str(&format!("%{b:02X}"));
        }
    }
    url
}

/// Candy `desk-plan`'s file with `checks` (YAML nodes) after its candy node.
pub(crate) fn plan_candy(checks: &str) -> String {
    format!("desk-plan:\n  candy: {{description: the plan's checks (written by the test)}}\n{checks}")
}

/// The running box.
pub(crate) struct Desk {
    /// The project (only ever used to make commands; `Box` is not `Sync`).
    project: Mutex<Box>,
    /// Host port of the container's 5900.
    pub(crate) vnc_port: u16,
    /// Host port of the container's 9222.
    pub(crate) cdp_port: u16,
}

impl Desk {
    /// Runs `charly <args>` in the project.
    pub(crate) fn run(&self, args: &[&str]) -> Run {
        let mut cmd = self.project.lock().unwrap_or_else(|e| e.into_inner()).charly();
        cmd.args(args);
        Run::of(&mut cmd, args)
    }

    /// The project directory.
    pub(crate) fn proj(&self) -> std::path::PathBuf {
        self.project.lock().unwrap_or_else(|e| e.into_inner()).proj()
    }
}

/// The box, built and started on first use; every test of the binary shares it. When that
/// failed, every test fails with the first one's reason (none builds again).
pub(crate) fn desk() -> &'static Desk {
    static DESK: OnceLock<Result<Desk, String>> = OnceLock::new();
    let made = DESK.get_or_init(|| {
        std::panic::catch_unwind(make).map_err(|e| {
            let text = e.downcast_ref::<String>().cloned();
            text.or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
        })
    });
    made.as_ref().unwrap_or_else(|e| panic!("the shared box {NAME} did not start: {e}"))
}

/// Serialises the tests that move the desktop's pointer (the markers show the last move).
pub(crate) fn pointer() -> MutexGuard<'static, ()> {
    static POINTER: Mutex<()> = Mutex::new(());
    POINTER.lock().unwrap_or_else(|e| e.into_inner())
}

fn make() -> Desk {
    let b = Box::with_base(NAME, DESKTOP);
    watch(&b);
    b.candy(NAME, "desk", &desk_candy());
    b.candy(NAME, "desk-plan", &plan_candy(""));
    b.run(&["box", "validate"]).status(0);
    let started = Instant::now();
    b.run(&["box", "build", NAME]).status(0);
    let build_took = started.elapsed();
    eprintln!("desktop: box build {NAME} took {build_took:?}");
    record(&b, "images", &["image", "inspect", "--format", "{{.Id}}", &format!("localhost/{NAME}:latest")]);
    let (vnc_port, cdp_port) = start(&b);
    record(&b, "containers", &["container", "inspect", "--format", "{{.Id}}", CONTAINER]);
    let desk = Desk { project: Mutex::new(b), vnc_port, cdp_port };
    wait_for(&desk, &["check", "cdp", "status", NAME], Duration::from_secs(120), "DevTools");
    wait_for(&desk, &["check", "vnc", "status", NAME], Duration::from_secs(60), "x11vnc");
    desk
}

/// `charly start` with 5900 and 9222 published on free loopback ports; another pair when
/// one was taken between finding it free and podman binding it (up to 5 tries).
fn start(b: &Box) -> (u16, u16) {
    let mut last = String::new();
    for _ in 0..5 {
        let (vnc, cdp) = (free_port(), free_port());
        let (pv, pc) = (format!("127.0.0.1:{vnc}:5900"), format!("127.0.0.1:{cdp}:9222"));
        let run = b.run(&["start", NAME, "-p", &pv, "-p", &pc]);
        if run.code == Some(0) {
            return (vnc, cdp);
        }
        assert!(run.stderr.contains("address already in use"), "{}", run.dump());
        last = run.dump();
        let _ = Command::new("podman").args(["rm", "-f", "-t", "0", CONTAINER]).output();
    }
    panic!("charly start: no free ports in 5 tries:\n{last}");
}

/// Runs `args` until it exits 0, for at most `limit`.
fn wait_for(desk: &Desk, args: &[&str], limit: Duration, what: &str) {
    let started = Instant::now();
    loop {
        let run = desk.run(args);
        if run.code == Some(0) {
            eprintln!("desktop: {what} answered after {:?}", started.elapsed());
            return;
        }
        if started.elapsed() > limit {
            let logs = desk.run(&["logs", NAME]);
            panic!(
                "{what} did not answer within {limit:?}\n{}\ncontainer logs:\n{}",
                run.dump(),
                logs.stdout
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Starts the watcher: when this process ends, it removes the container and image recorded
/// in the test's directory, the box's dangling images (earlier layers) and the directory.
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
    // The shell backgrounds the watcher and exits (the watcher is no child of this process).
    let started = Command::new("sh").args(["-c", &script]).stdin(Stdio::null()).status();
    assert!(started.is_ok_and(|s| s.success()), "sh cannot start the cleanup watcher");
}

/// The RGB of pixel (`x`, `y`) of the PNG in `bytes`, and the image's size.
pub(crate) fn png_pixel(bytes: &[u8], x: u32, y: u32) -> ([u8; 3], (u32, u32)) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).expect("a PNG frame");
    assert_eq!(info.bit_depth, png::BitDepth::Eight, "8-bit samples");
    let samples = info.color_type.samples();
    assert!(samples >= 3, "an RGB PNG, not {:?}", info.color_type);
    let at = (y as usize * info.line_size) + x as usize * samples;
    ([buf[at], buf[at + 1], buf[at + 2]], (info.width, info.height))
}
