//! `vm console`: the VM's serial console (qemu's `-serial` on `console.sock`, everything it
//! printed kept in `console.log`), not qemu's monitor (REFERENCE.md §18.11).
//!
//! As a tool, or with `--lines`, or without a terminal: the log's last lines. On a terminal:
//! the terminal in raw mode relayed to the socket until Ctrl-] (0x1d) or the VM's end.

use std::io::{Read as _, Write as _};
use std::os::unix::net::UnixStream;
use std::path::Path;

use super::state::Dir;
use super::{Vm, VmConsole, VmError, qemu};
use crate::context::Ctx;

/// The lines a tool call returns when it names none.
pub const LINES: u32 = 100;

/// The byte that detaches: Ctrl-].
const DETACH: u8 = 0x1d;

/// The last `n` lines of the console log (carriage returns and escape sequences dropped).
pub fn tail(dir: &Dir, n: usize) -> Vec<String> {
    let text = std::fs::read(dir.file("console.log")).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<String> = text.split('\n').map(clean).collect();
    let mut lines: Vec<String> = lines.into_iter().rev().skip_while(String::is_empty).collect();
    lines.truncate(n);
    lines.reverse();
    lines
}

/// A console line without `\r` and ANSI escape sequences (`ESC [ ... letter`).
fn clean(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {}
            '\u{1b}' => {
                if chars.peek() == Some(&'[') {
                    chars.next();
                    for c in chars.by_ref() {
                        if c.is_ascii_alphabetic() {
                            break;
                        }
                    }
                }
            }
            c if c.is_control() && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

/// `vm console`: see the module docs.
///
/// # Errors
///
/// A VM that was not created; attaching to one that does not run.
pub fn console(
    ctx: &Ctx,
    root: &Path,
    box_name: &str,
    instance: Option<&str>,
    lines: Option<u32>,
) -> Result<VmConsole, VmError> {
    let vm = Vm::new(root, box_name, instance)?;
    let spec =
        vm.dir.spec()?.ok_or_else(|| VmError::NotCreated { name: vm.name().to_owned(), args: vm.args() })?;
    let log = vm.dir.file("console.log");
    let attach = lines.is_none() && ctx.attaches();
    let running = if spec.backend == "libvirt" {
        super::libvirt::states(ctx).get(vm.name()).is_some_and(|s| s == "running")
    } else {
        qemu::running(&vm.dir)?.is_some()
    };
    if !attach {
        return Ok(VmConsole {
            name: vm.name().to_owned(),
            running,
            attached: false,
            lines: tail(&vm.dir, lines.unwrap_or(LINES) as usize),
            log,
        });
    }
    if !running {
        return Err(VmError::NotRunning {
            name: vm.name().to_owned(),
            why: format!(
                " (`charly vm console {} --lines 50` shows what its console printed last)",
                vm.args()
            ),
            args: vm.args(),
        });
    }
    let _attached = attach_lock(&vm)?;
    let stream = UnixStream::connect(vm.dir.file("console.sock"))?;
    relay(stream, vm.name())?;
    Ok(VmConsole { name: vm.name().to_owned(), running: true, attached: true, lines: Vec::new(), log })
}

/// Holds `console.attach` (an exclusive `flock`, released when the process ends, whatever
/// ends it) with this process's pid in it: qemu's console socket serves one connection, and a
/// second would be accepted by the kernel and then get nothing, so it is refused here.
///
/// # Errors
///
/// [`VmError::Usage`] naming the pid attached; [`VmError::Io`].
fn attach_lock(vm: &Vm) -> Result<std::fs::File, VmError> {
    use std::io::Seek as _;
    let path = vm.dir.file("console.attach");
    let mut file =
        std::fs::OpenOptions::new().create(true).truncate(false).read(true).write(true).open(&path)?;
    if rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_err() {
        let mut holder = String::new();
        let _ = file.read_to_string(&mut holder);
        let holder = holder.trim();
        let who =
            if holder.is_empty() { "another charly".to_owned() } else { format!("charly pid {holder}") };
        return Err(VmError::Usage(format!(
            "VM {}'s serial console is attached already, by {who} (`charly vm console` on another terminal; its \
             socket serves one at a time): detach there with Ctrl-], or read the log with `charly vm console {} \
             --lines 50`",
            vm.name(),
            vm.args()
        )));
    }
    file.set_len(0)?;
    file.rewind()?;
    writeln!(file, "{}", std::process::id())?;
    Ok(file)
}

/// The terminal in raw mode, put back when dropped.
struct Raw(rustix::termios::Termios);

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = rustix::termios::tcsetattr(std::io::stdin(), rustix::termios::OptionalActions::Now, &self.0);
    }
}

/// Relays the terminal to `stream` and back until Ctrl-] is typed or the socket closes.
fn relay(stream: UnixStream, name: &str) -> Result<(), VmError> {
    let saved = rustix::termios::tcgetattr(std::io::stdin()).map_err(std::io::Error::from)?;
    let mut raw = saved.clone();
    raw.make_raw();
    // Attaching is the terminal's whole point here: the hint goes where the user looks.
    eprint!("charly: connected to {name}'s serial console; Ctrl-] detaches\r\n");
    rustix::termios::tcsetattr(std::io::stdin(), rustix::termios::OptionalActions::Now, &raw)
        .map_err(std::io::Error::from)?;
    let _restore = Raw(saved);
    let mut from_vm = stream.try_clone()?;
    let to_terminal = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        let mut out = std::io::stdout();
        while let Ok(n) = from_vm.read(&mut buf) {
            if n == 0 || out.write_all(&buf[..n]).and_then(|()| out.flush()).is_err() {
                break;
            }
        }
    });
    let mut to_vm = stream;
    let mut stdin = std::io::stdin();
    let mut buf = [0u8; 1024];
    loop {
        if to_terminal.is_finished() {
            break;
        }
        let n = stdin.read(&mut buf)?;
        if n == 0 {
            break;
        }
        let data = &buf[..n];
        let end = data.iter().position(|b| *b == DETACH);
        if to_vm.write_all(&data[..end.unwrap_or(n)]).is_err() || end.is_some() {
            break;
        }
    }
    let _ = to_vm.shutdown(std::net::Shutdown::Both);
    let _ = to_terminal.join();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_drops_carriage_returns_and_escapes() {
        assert_eq!(clean("\u{1b}[0;32m  OK  \u{1b}[0m] Started ssh\r"), "  OK  ] Started ssh");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("console.log"), "a\r\nb\r\nlogin: \r\n\r\n").unwrap();
        let d = Dir(dir.path().to_owned());
        assert_eq!(tail(&d, 2), ["b", "login: "]);
        assert_eq!(tail(&d, 9), ["a", "b", "login: "]);
    }
}
