//! The QEMU Machine Protocol over a VM's `qmp.sock`, by hand: the greeting, `qmp_capabilities`,
//! then one command; newline-delimited JSON (qemu's docs/interop/qmp-spec.rst). Events that
//! arrive before the answer (`POWERDOWN`, `SHUTDOWN`) are skipped. Why not a crate: see the
//! module docs of [`crate::vm`].

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::UnixStream;

/// How long one exchange may take: qemu answers at once, or is wedged.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// Why a QMP exchange failed (the caller falls back to a signal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QmpError(pub String);

impl std::fmt::Display for QmpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Sends `command` (with `arguments`, when given) to the QMP socket at `socket` and returns
/// its `return` value.
///
/// # Errors
///
/// [`QmpError`] when the socket does not answer within [`TIMEOUT`], the greeting is not QMP,
/// or qemu answers with an `error` (its `desc`).
pub async fn execute(socket: &Path, command: &str, arguments: Option<Value>) -> Result<Value, QmpError> {
    match tokio::time::timeout(TIMEOUT, exchange(socket, command, arguments)).await {
        Ok(result) => result,
        Err(_) => {
            Err(QmpError(format!("{} did not answer within {} s", socket.display(), TIMEOUT.as_secs())))
        }
    }
}

async fn exchange(socket: &Path, command: &str, arguments: Option<Value>) -> Result<Value, QmpError> {
    let stream = UnixStream::connect(socket)
        .await
        .map_err(|e| QmpError(format!("cannot connect to {}: {e}", socket.display())))?;
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    let greeting = next(&mut lines).await?;
    if greeting.get("QMP").is_none() {
        return Err(QmpError(format!("{} is not a QMP socket (it said {greeting})", socket.display())));
    }
    for (name, args) in [("qmp_capabilities", None), (command, arguments)] {
        let mut request = json!({"execute": name});
        if let Some(args) = args {
            request["arguments"] = args;
        }
        let mut line = request.to_string();
        line.push('\n');
        write.write_all(line.as_bytes()).await.map_err(|e| QmpError(format!("cannot send {name}: {e}")))?;
        loop {
            let answer = next(&mut lines).await?;
            if let Some(value) = answer.get("return") {
                if name == command {
                    return Ok(value.clone());
                }
                break;
            }
            if let Some(error) = answer.get("error") {
                let desc = error.get("desc").and_then(Value::as_str).unwrap_or("no description");
                return Err(QmpError(format!("qemu refused {name}: {desc}")));
            }
            // An event ({"event": ...}): not the answer.
        }
    }
    unreachable!("the loop returns at the command's answer")
}

async fn next(
    lines: &mut tokio::io::Lines<BufReader<tokio::net::unix::OwnedReadHalf>>,
) -> Result<Value, QmpError> {
    match lines.next_line().await {
        Ok(Some(line)) => {
            serde_json::from_str(&line).map_err(|e| QmpError(format!("not JSON from qemu ({e}): {line}")))
        }
        Ok(None) => Err(QmpError("qemu closed the QMP connection".into())),
        Err(e) => Err(QmpError(format!("cannot read from QMP: {e}"))),
    }
}
