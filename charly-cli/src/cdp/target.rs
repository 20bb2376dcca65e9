//! Where a `check.cdp.*` target's browser is: `.` at `--cdp-url`, or a box's running
//! container at the host port it publishes for container port 9222.

use super::{Browser, CONTAINER_PORT, CdpError, DEFAULT_URL};
use crate::engine::{Engine, Target};

/// The browser `target` names: `.` (this machine, at `cdp_url`, default [`DEFAULT_URL`]) or a
/// box (`instance`: its `-i`), whose running container publishes container port 9222.
///
/// # Errors
///
/// [`CdpError::Usage`] for a `cdp_url` that is not `http://host:port`, or one given with a
/// box (whose browser is at its published port, not there); for a box
/// [`CdpError::Engine`] (no container, not running, podman missing) and
/// [`CdpError::NoPortMapping`].
pub async fn resolve(
    engine: &Engine,
    target: &str,
    instance: Option<&str>,
    cdp_url: Option<&str>,
) -> Result<Browser, CdpError> {
    if target == "." {
        if let Some(why) = crate::resolve::instance_on_local(instance) {
            return Err(CdpError::Usage(why));
        }
        return resolve_local(cdp_url.unwrap_or(DEFAULT_URL));
    }
    if let Some(why) =
        crate::resolve::endpoint_on_box("--cdp-url", "cdp_url", cdp_url, target, CONTAINER_PORT)
    {
        return Err(CdpError::Usage(why));
    }
    let box_target = Target::new(target, instance)?;
    engine.running(&box_target).await?;
    resolve_container(engine, &box_target.container, Some(&box_target)).await
}

/// The browser of this machine at `cdp_url` (`http://host:port`).
///
/// # Errors
///
/// [`CdpError::Usage`] for a URL that is not `http(s)://host[:port]`.
pub fn resolve_local(cdp_url: &str) -> Result<Browser, CdpError> {
    let parsed = url::Url::parse(cdp_url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some());
    let Some(parsed) = parsed else {
        return Err(CdpError::Usage(format!(
            "--cdp-url {:?}: expects the DevTools HTTP endpoint, http://host:port (default {DEFAULT_URL})",
            charly::client::redacted(cdp_url)
        )));
    };
    let base = parsed.as_str().trim_end_matches('/').to_owned();
    let port = parsed.port_or_known_default().unwrap_or(CONTAINER_PORT);
    let hint = format!(
        "is a browser running with --remote-debugging-port={port} (e.g. `chromium --headless=new \
         --remote-debugging-address=127.0.0.1 --remote-debugging-port={port}`)? Another endpoint: --cdp-url"
    );
    Ok(Browser::new(&base, hint))
}

/// The browser in `container`, at the host port `podman port` gives for 9222 (or 9222 itself
/// with `--network host`); `who` is the box (and `-i`) it runs, named in the hints (`None`:
/// read from the container's labels when a hint needs it).
///
/// # Errors
///
/// [`CdpError::NoPortMapping`], [`CdpError::Engine`].
pub async fn resolve_container(
    engine: &Engine,
    container: &str,
    who: Option<&Target>,
) -> Result<Browser, CdpError> {
    let (box_name, instance) = match who {
        Some(t) => (t.box_name.clone(), t.instance.clone()),
        None => (container.strip_prefix("charly-").unwrap_or(container).to_owned(), None),
    };
    let fix = match &instance {
        Some(i) => format!("{box_name} -i {i}"),
        None => box_name.clone(),
    };
    let port = engine.output(&["port", container, "9222/tcp"], None, false).await?;
    let mapped = port.stdout.lines().map(str::trim).find(|l| !l.is_empty()).map(normalise);
    let base = match mapped {
        Some(addr) if port.status == 0 => format!("http://{addr}"),
        _ => {
            let mode =
                engine.query(&["inspect", "--format", "{{.HostConfig.NetworkMode}}", container]).await?;
            if mode.trim() != "host" {
                let (box_name, instance) = match who {
                    Some(_) => (box_name, instance),
                    None => engine.target_of(container).await,
                };
                let now = engine
                    .output(&["port", container], None, false)
                    .await
                    .map(|o| o.stdout)
                    .unwrap_or_default();
                let kept = crate::resolve::published_specs(&now);
                return Err(CdpError::NoPortMapping {
                    container: container.to_owned(),
                    fix: crate::resolve::publish_hint_keeping(
                        &box_name,
                        instance.as_deref(),
                        CONTAINER_PORT,
                        &kept,
                    ),
                });
            }
            format!("http://127.0.0.1:{CONTAINER_PORT}")
        }
    };
    let hint = format!(
        "container {container} runs, but nothing answers on its port 9222: is Chromium running in it with \
         --remote-debugging-port=9222 (`charly cmd {fix} 'grep -l remote-debugging-port /proc/[0-9]*/cmdline'`), listening on \
         0.0.0.0 or relayed (`charly service status {fix}`)?"
    );
    Ok(Browser::new(&base, hint))
}

/// `0.0.0.0:P` and `[::]:P` as `127.0.0.1:P`.
fn normalise(addr: &str) -> String {
    match addr.rsplit_once(':') {
        Some(("0.0.0.0" | "[::]" | "::", port)) => format!("127.0.0.1:{port}"),
        _ => addr.to_owned(),
    }
}
