//! Where in-container probes run: a running container (`podman exec`), a fresh disposable
//! container per probe (`podman run --rm`, for `charly check box` and `box.test`), or nowhere.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::probes::ProbeOutput;
use crate::engine::Engine;

/// Where a plan's in-container verbs run.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Venue {
    /// `podman exec <container> sh -c <script>` in a running container.
    Container {
        /// The engine.
        engine: Engine,
        /// The container's name.
        container: String,
    },
    /// `podman run --rm --pull=never --entrypoint sh <image> -c <script>`: a new container per
    /// probe, removed when it ends (also on a timeout), with the box's env (it lives in the
    /// image's `ai.opencharly.env` label, which `podman run` does not apply).
    Disposable {
        /// The engine.
        engine: Engine,
        /// The image reference.
        image: String,
        /// `KEY=VALUE` lines the container gets (the image's env label).
        env: Vec<String>,
    },
    /// None: in-container verbs fail with this reason.
    Unavailable(String),
}

impl Default for Venue {
    fn default() -> Self {
        Venue::Unavailable(
            "no container to run in (run the plan for a box: charly check live or check box)".into(),
        )
    }
}

static DISPOSABLE: AtomicU32 = AtomicU32::new(0);

impl Venue {
    /// Runs `script` with `sh -c` in the venue, bounded by `timeout`; `Err` when it could not
    /// run at all (no venue, podman missing or refusing, the container gone, the timeout).
    pub async fn sh(&self, script: &str, timeout: Duration) -> Result<ProbeOutput, String> {
        let (engine, args, name) = match self {
            Venue::Unavailable(why) => return Err(why.clone()),
            Venue::Container { engine, container } => {
                let args =
                    vec!["exec".to_owned(), container.clone(), "sh".into(), "-c".into(), script.into()];
                (engine, args, None)
            }
            Venue::Disposable { engine, image, env } => {
                engine.check_cancelled().map_err(|e| e.to_string())?;
                let n = DISPOSABLE.fetch_add(1, Ordering::Relaxed);
                let name = format!("charly-check-{}-{n}", std::process::id());
                let mut args = vec![
                    "run".to_owned(),
                    "--rm".into(),
                    "--pull=never".into(),
                    "--name".into(),
                    name.clone(),
                    "--label".into(),
                    "ai.opencharly.check=disposable".into(),
                    "--entrypoint".into(),
                    "sh".into(),
                ];
                for line in env {
                    args.extend(["--env".into(), line.clone()]);
                }
                args.extend([image.clone(), "-c".into(), script.into()]);
                (engine, args, Some(name))
            }
        };
        let run = async {
            match self {
                // A disposable run whose image lookup met another podman's removal created
                // nothing: it is run again ([`Engine::read`]).
                Venue::Disposable { image, .. } => engine.read(&args, &[image]).await,
                _ => engine.output(&args, None, false).await,
            }
        };
        let ran = tokio::time::timeout(timeout, run).await;
        let out = match ran {
            Ok(Ok(out)) => out,
            Ok(Err(e)) => return Err(e.to_string()),
            Err(_) => {
                if let Some(name) = &name {
                    let _ = engine.output(&["rm", "--force", "--time", "0", name], None, false).await;
                }
                return Err(format!("timed out after {}", charly::client::format_duration(timeout)));
            }
        };
        // 125: podman itself failed (no such container, no such image); the script's status
        // otherwise.
        if out.status == 125 {
            let why = out.stderr.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("podman failed");
            return Err(format!("{}: {}", self.describe(), why.trim_start_matches("Error: ")));
        }
        Ok(ProbeOutput { status: out.status, stdout: out.stdout, stderr: out.stderr })
    }

    /// `container charly-web`, `a disposable container of localhost/web:latest`.
    pub fn describe(&self) -> String {
        match self {
            Venue::Container { container, .. } => format!("container {container}"),
            Venue::Disposable { image, .. } => format!("a disposable container of {image}"),
            Venue::Unavailable(_) => "no container".into(),
        }
    }
}
