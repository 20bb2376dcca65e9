//! `start` and `stop` of a deployment whose deploy entry records run mode `quadlet`
//! (`config setup --run-mode quadlet` wrote its units): systemd runs the container from the
//! `.container` unit, so `start` is `systemctl --user start <container>.service` and `stop` is
//! `systemctl --user stop` (a `podman stop` would be undone by the unit's `Restart=always`),
//! as the reference does. Where systemd is not running (these machines: no systemd as PID 1),
//! `start` is an error naming the switch to run mode `direct`; nothing is started.

use std::path::Path;

use super::lifecycle::StartRequest;
use super::report::{Started, Stopped};
use super::{Deploy, DeployError, short_id};
use crate::engine::{EngineError, PortMap, Target, start_args};

/// Whether systemd runs this host (as PID 1): `/run/systemd/system` exists.
pub fn systemd_running() -> bool {
    Path::new("/run/systemd/system").is_dir()
}

/// `systemctl --user <verb> <service>`.
fn systemctl(verb: &str, service: &str) -> Result<(), DeployError> {
    let out = std::process::Command::new("systemctl").args(["--user", verb, service]).output()?;
    if out.status.success() {
        return Ok(());
    }
    Err(EngineError::Failed {
        command: format!("systemctl --user {verb} {service}"),
        status: out.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
    }
    .into())
}

impl Deploy<'_> {
    /// `start` of a quadlet deployment: see the [module](self) docs. The flags a direct
    /// start takes (env, ports, volumes, binds, a command) belong in the entry and its unit.
    ///
    /// # Errors
    ///
    /// Flags given, a missing unit, systemd not running, `systemctl`'s failure.
    pub(super) fn start_unit(
        &self,
        target: &Target,
        r: &StartRequest<'_>,
        units_dir: &Path,
    ) -> Result<Started, DeployError> {
        let args = start_args(target);
        let at = format!("deploy entry {}: run_mode", target.key());
        let unit = units_dir.join(format!("{}.container", target.container));
        let service = format!("{}.service", target.container);
        let flags = [r.env, r.ports, r.volumes, r.binds, r.command];
        if flags.iter().any(|f| !f.is_empty()) {
            return Err(DeployError::Saved {
                at,
                value: "quadlet".into(),
                problem: format!(
                    "systemd runs it as its unit {} says, so start takes no --env, --port, --volume, --bind \
                     or command; change the entry with `charly config setup {args}` and the options to change, or run it directly \
                     (`charly config setup {args} --run-mode direct`)",
                    unit.display()
                ),
            });
        }
        if !unit.is_file() {
            return Err(DeployError::Saved {
                at,
                value: "quadlet".into(),
                problem: format!(
                    "its unit {} is missing; write it again (`charly config setup {args} --run-mode quadlet`) \
                     or run it directly (`charly config setup {args} --run-mode direct`)",
                    unit.display()
                ),
            });
        }
        if !systemd_running() {
            return Err(DeployError::Saved {
                at,
                value: "quadlet".into(),
                problem: format!(
                    "systemd runs it from {} (`systemctl --user start {service}`), but systemd is not \
                     running on this host; run it with podman instead: `charly config setup {args} \
                     --run-mode direct`, then `charly start {args}`",
                    unit.display()
                ),
            });
        }
        self.engine.check_cancelled()?;
        systemctl("start", &service)?;
        let c = self
            .block(self.engine.container(&target.container))?
            .ok_or_else(|| self.engine.missing(target))?;
        Ok(Started {
            box_name: target.box_name.clone(),
            instance: target.instance.clone(),
            container: target.container.clone(),
            id: short_id(&c.id),
            image: c.image.clone(),
            ports: c
                .published()
                .into_iter()
                .map(|(container, host, protocol)| PortMap {
                    host_ip: super::args::BIND_ADDRESS.into(),
                    host,
                    container,
                    protocol,
                })
                .collect(),
            command: Vec::new(),
            replaced_exited: false,
            seeded: Vec::new(),
            post_enable: Vec::new(),
            post_enable_skipped: None,
        })
    }

    /// `stop` of a quadlet deployment under systemd (`systemctl --user stop`); `None` when
    /// the deployment runs directly (or systemd does not run here): `podman stop` then.
    ///
    /// # Errors
    ///
    /// `systemctl`'s failure.
    pub(super) fn stop_unit(
        &self,
        target: &Target,
        timeout_secs: u32,
    ) -> Result<Option<Stopped>, DeployError> {
        if !systemd_running() {
            return Ok(None);
        }
        // A deploy file that cannot be read does not keep a container from stopping.
        let entry = super::plan::entry(&crate::deployfile::deploy_path(), target).ok().flatten();
        let unit = crate::deployfile::quadlet_dir().join(format!("{}.container", target.container));
        if !super::plan::EntryValues::of(entry.as_ref()).quadlet() || !unit.is_file() {
            return Ok(None);
        }
        self.engine.check_cancelled()?;
        systemctl("stop", &format!("{}.service", target.container))?;
        Ok(Some(Stopped { container: target.container.clone(), timeout_secs }))
    }
}
