//! Benchmark: decoding a full 1920×1080 ZRLE screenshot (issue 15's budget: ≤ 150 ms).
//!
//! Starts Xvfb 1920x1080x24 and x11vnc on 127.0.0.1 (both stopped at the end), paints the root
//! window with a 16×16 pseudo-random two-colour bitmap (every 64×64 tile a packed-palette
//! tile, the costliest common case), records the bytes of one real session (handshake and a
//! full non-incremental ZRLE update), then replays them N times through [`Client`]: the figure
//! is decoding only, no network or server time. It also prints the live screenshot's
//! wall time (connect + server encode + decode) for comparison.
//!
//! Run: `cargo run --release -p charly-cli --example vnc_zrle [N]` (N defaults to 20).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use charly_cli::vnc::{self, Client, Server};

/// A stream that keeps a copy of everything read.
struct Recording {
    inner: TcpStream,
    log: Arc<Mutex<Vec<u8>>>,
}

impl Read for Recording {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.log.lock().unwrap().extend_from_slice(&buf[..n]);
        Ok(n)
    }
}
impl Write for Recording {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Serves recorded bytes; writes vanish.
struct Replay {
    data: Arc<Vec<u8>>,
    pos: usize,
}

impl Read for Replay {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
impl Write for Replay {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20);
    let display = format!(":{}", 400 + std::process::id() % 100);
    let dir = tempfile::tempdir().unwrap();
    let mut xvfb = Command::new("Xvfb")
        .args([display.as_str(), "-screen", "0", "1920x1080x24", "-nolisten", "tcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb");
    std::thread::sleep(Duration::from_millis(700));
    // A deterministic pseudo-random 16x16 bitmap (xorshift).
    let mut s: u32 = 0x9e37_79b9;
    let bits: Vec<String> = (0..32)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            format!("0x{:02x}", s & 0xff)
        })
        .collect();
    let xbm = dir.path().join("noise.xbm");
    std::fs::write(
        &xbm,
        format!(
            "#define n_width 16\n#define n_height 16\nstatic unsigned char n_bits[] = {{\n {}}};\n",
            bits.join(", ")
        ),
    )
    .unwrap();
    let port = free_port();
    let mut x11vnc = Command::new("x11vnc")
        .args([
            "-display",
            &display,
            "-localhost",
            "-rfbport",
            &port.to_string(),
            "-nopw",
            "-forever",
            "-quiet",
            "-nocursor",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("x11vnc");
    let addr = format!("127.0.0.1:{port}");
    let start = Instant::now();
    while TcpStream::connect(&addr).is_err() {
        assert!(start.elapsed() < Duration::from_secs(15), "x11vnc did not come up");
        std::thread::sleep(Duration::from_millis(50));
    }
    let ok = Command::new("xsetroot")
        .args(["-bitmap", &xbm.display().to_string(), "-fg", "#c83232", "-bg", "#1e64c8"])
        .env("DISPLAY", &display)
        .status()
        .unwrap();
    assert!(ok.success(), "xsetroot");
    let server = Server::new(addr.clone(), ".", vec![]);

    // x11vnc polls the X screen: wait (bounded) until its copy shows the pattern.
    let fg = [0xc8, 0x32, 0x32];
    let mut painted = false;
    for _ in 0..100 {
        let mut c = vnc::connect(&server, None, Duration::from_secs(10)).unwrap();
        let fb = c.screenshot().unwrap();
        if (0..16).any(|x| fb.pixel(x, 0) == Some(fg)) && (0..16).any(|x| fb.pixel(x, 0) != Some(fg)) {
            painted = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(painted, "x11vnc never showed the pattern");
    // Live: connect, handshake, screenshot.
    let t = Instant::now();
    let mut live = vnc::connect(&server, None, Duration::from_secs(10)).unwrap();
    live.screenshot().unwrap();
    let live_ms = t.elapsed().as_secs_f64() * 1e3;
    drop(live);

    // Record one session.
    let sock = TcpStream::connect(&addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let r = Recording { inner: sock.try_clone().unwrap(), log: log.clone() };
    let w = Recording { inner: sock, log: Arc::new(Mutex::new(Vec::new())) };
    let mut c = Client::handshake(r, w, None, (&addr, ".")).unwrap();
    let reference = c.screenshot().unwrap().clone();
    drop(c);
    let _ = x11vnc.kill();
    let _ = xvfb.kill();
    let _ = x11vnc.wait();
    let _ = xvfb.wait();
    let data = Arc::new(std::mem::take(&mut *log.lock().unwrap()));

    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let r = Replay { data: data.clone(), pos: 0 };
        let w = Replay { data: data.clone(), pos: 0 };
        let mut c = Client::handshake(r, w, None, ("replay", ".")).unwrap();
        let fb = c.screenshot().unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(*fb == reference, "replayed framebuffer differs");
    }
    times.sort_by(f64::total_cmp);
    let png_t = Instant::now();
    let png = reference.png().unwrap();
    let png_ms = png_t.elapsed().as_secs_f64() * 1e3;
    println!(
        "vnc_zrle: 1920x1080 ZRLE, {} bytes on the wire; decode median {:.1} ms, min {:.1} ms, max {:.1} ms (N={n}, budget 150 ms); \
         PNG encode {:.1} ms ({} bytes); live screenshot incl. connect and server {:.1} ms",
        data.len(),
        times[n / 2],
        times[0],
        times[n - 1],
        png_ms,
        png.len(),
        live_ms
    );
}
