//! Real VNC servers on 127.0.0.1: Xvfb + x11vnc, and TigerVNC's Xvnc. Each stops on drop.

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free TCP port on 127.0.0.1 (bound, then released).
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A free X display number (no lock file, no socket).
pub(crate) fn free_display() -> u32 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    for _ in 0..200 {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let d = 140 + (std::process::id() % 50) * 20 + n;
        if !Path::new(&format!("/tmp/.X{d}-lock")).exists()
            && !Path::new(&format!("/tmp/.X11-unix/X{d}")).exists()
        {
            return d;
        }
    }
    panic!("no free X display")
}

/// Running servers, killed on drop.
pub(crate) struct Lab {
    children: Vec<Child>,
    /// The X display, e.g. `:151`.
    pub(crate) display: String,
    /// `127.0.0.1:P` of the VNC server.
    pub(crate) addr: String,
}

impl Drop for Lab {
    /// SIGTERM first, so that x11vnc and the X servers remove their SysV shared memory (a
    /// SIGKILL left about 200 segments a run, until `shmget` failed with "No space left on
    /// device" at the system's 4096), then SIGKILL what has not ended within 2 s.
    fn drop(&mut self) {
        for c in self.children.iter_mut().rev() {
            let _ = Command::new("kill").args(["-TERM", &c.id().to_string()]).status();
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(2) && matches!(c.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn spawn(cmd: &mut Command) -> Child {
    cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap_or_else(|e| panic!("{cmd:?}: {e}"))
}

fn wait_for(what: &str, ok: impl Fn() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < Duration::from_secs(15), "{what} did not come up in 15 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

impl Lab {
    /// Xvfb `WxH` at 24 bits, then x11vnc on a free port, with `-passwd PW` or `-nopw`.
    pub(crate) fn x11vnc(width: u32, height: u32, password: Option<&str>) -> Lab {
        let d = free_display();
        let display = format!(":{d}");
        let mut lab = Lab { children: Vec::new(), display: display.clone(), addr: String::new() };
        lab.children.push(spawn(Command::new("Xvfb").args([
            display.as_str(),
            "-screen",
            "0",
            &format!("{width}x{height}x24"),
            "-nolisten",
            "tcp",
        ])));
        wait_for("Xvfb", || Path::new(&format!("/tmp/.X11-unix/X{d}")).exists());
        let port = free_port();
        let port_s = port.to_string();
        let mut args = vec![
            "-display",
            display.as_str(),
            "-localhost",
            "-rfbport",
            port_s.as_str(),
            "-forever",
            "-shared",
            "-quiet",
            "-nocursor",
        ];
        match password {
            Some(p) => args.extend(["-passwd", p]),
            None => args.push("-nopw"),
        }
        lab.children.push(spawn(Command::new("x11vnc").args(&args)));
        lab.addr = format!("127.0.0.1:{port}");
        let addr = lab.addr.clone();
        wait_for("x11vnc", || TcpStream::connect(&addr).is_ok());
        lab
    }

    /// TigerVNC's Xvnc offering only `security` (e.g. `TLSNone`, which is VeNCrypt).
    pub(crate) fn xtigervnc(security: &str) -> Lab {
        Self::xtigervnc_with(security, &[])
    }

    /// TigerVNC's Xvnc offering `security`, with more arguments (`-X509Cert F`, ...).
    pub(crate) fn xtigervnc_with(security: &str, extra: &[&str]) -> Lab {
        let d = free_display();
        let display = format!(":{d}");
        let port = free_port();
        let mut lab =
            Lab { children: Vec::new(), display: display.clone(), addr: format!("127.0.0.1:{port}") };
        lab.children.push(spawn(
            Command::new("Xtigervnc")
                .args([
                    display.as_str(),
                    "-geometry",
                    "320x240",
                    "-depth",
                    "24",
                    "-rfbport",
                    &port.to_string(),
                    "-localhost=1",
                    "-interface",
                    "127.0.0.1",
                    "-SecurityTypes",
                    security,
                    "-nolisten",
                    "tcp",
                ])
                .args(extra),
        ));
        let addr = lab.addr.clone();
        wait_for("Xtigervnc", || TcpStream::connect(&addr).is_ok());
        wait_for("Xtigervnc's X socket", || Path::new(&format!("/tmp/.X11-unix/X{d}")).exists());
        lab
    }

    /// Runs an X client on the display to completion.
    pub(crate) fn x(&self, program: &str, args: &[&str]) -> String {
        let out = Command::new(program).args(args).env("DISPLAY", &self.display).output().unwrap();
        assert!(out.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits (bounded, 5 s) until the X server's pointer is at (`x`, `y`): x11vnc applies the
    /// events it was sent on its own schedule, later under load (a CI run read the pointer
    /// still at the screen's centre right after `perform`).
    pub(crate) fn pointer_reaches(&self, x: u16, y: u16) {
        let started = std::time::Instant::now();
        loop {
            let loc = self.x("xdotool", &["getmouselocation", "--shell"]);
            if loc.contains(&format!("X={x}\n")) && loc.contains(&format!("Y={y}\n")) {
                return;
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(5),
                "the pointer never reached ({x}, {y}): {loc}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}
