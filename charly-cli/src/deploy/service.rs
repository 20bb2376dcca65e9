//! `service.{start,stop,restart,status}`: the supervisord programs of a running box, driven with
//! `supervisorctl` inside its container (REFERENCE.md §1, `service.*`; the box's init is
//! supervisord when its candies declare `service:` nodes, see [`crate::project::runtime`]).
//!
//! Which services a box has is read from its container's labels (the image's
//! `ai.opencharly.init` and `ai.opencharly.service`), never from the project: a service the
//! image does not declare is refused before anything runs, naming the box, the service and
//! the ones declared.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

use super::{Deploy, DeployError};
use crate::engine::Target;
use crate::project::runtime::{SUPERVISORD_CONF, Service, label};
use crate::report::Report;

/// What `service.*` asks supervisord.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ServiceAction {
    /// `supervisorctl start`.
    Start,
    /// `supervisorctl stop`.
    Stop,
    /// `supervisorctl restart`.
    Restart,
    /// `supervisorctl status`.
    Status,
}

impl ServiceAction {
    /// supervisorctl's verb.
    pub fn verb(self) -> &'static str {
        match self {
            ServiceAction::Start => "start",
            ServiceAction::Stop => "stop",
            ServiceAction::Restart => "restart",
            ServiceAction::Status => "status",
        }
    }
}

/// One line of `supervisorctl status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ServiceState {
    /// The program.
    pub name: String,
    /// `RUNNING`, `STOPPED`, `STARTING`, `BACKOFF`, `EXITED`, `FATAL`, ...
    pub state: String,
    /// The rest of the line (`pid 12, uptime 0:01:02`).
    pub description: String,
}

/// `service.*`: what supervisorctl did and said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ServiceReport {
    /// The container, `charly-<box>[-<instance>]`.
    pub container: String,
    /// What was asked.
    pub action: ServiceAction,
    /// The service, when one was named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// supervisorctl's exit status.
    pub exit_status: i32,
    /// Its output (stdout, then stderr).
    pub output: String,
    /// The services' states, read from the status output (`status` only).
    pub services: Vec<ServiceState>,
    /// The service was already as asked (`start` of a running one, `stop` of a stopped one):
    /// nothing was done, and that is no failure.
    pub unchanged: bool,
}

/// Whether supervisorctl's `output` for `action` says the program was already as asked
/// (`ERROR (already started)` for `start`, `ERROR (not running)` for `stop`; 4.2 exits 0 on
/// both).
fn already(action: ServiceAction, output: &str) -> bool {
    let last = output.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
    match action {
        ServiceAction::Start => last.ends_with(": ERROR (already started)"),
        ServiceAction::Stop => last.ends_with(": ERROR (not running)"),
        _ => false,
    }
}

impl fmt::Display for ServiceReport {
    /// `status`: `name<TAB>STATE<TAB>description` per service; otherwise supervisorctl's output.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.action == ServiceAction::Status && !self.services.is_empty() {
            return self
                .services
                .iter()
                .try_for_each(|s| writeln!(f, "{}\t{}\t{}", s.name, s.state, s.description));
        }
        if self.unchanged {
            let service = self.service.as_deref().unwrap_or_default();
            let state = if self.action == ServiceAction::Start { "already running" } else { "not running" };
            return writeln!(f, "{service}: {state} (nothing to do)");
        }
        f.write_str(&self.output)?;
        if !self.output.is_empty() && !self.output.ends_with('\n') {
            writeln!(f)?;
        }
        Ok(())
    }
}

impl Report for ServiceReport {
    fn failure(&self) -> Option<String> {
        // `status` exits 3 when a program is not running: that is its answer, not a failure.
        // supervisorctl 4.2 exits 0 when it refuses (`idle: ERROR (not running)`): its last
        // words say (`restart` of a stopped program says that error, then `started`).
        let last = self.output.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
        let refused = self.action != ServiceAction::Status && last.contains(": ERROR (") && !self.unchanged;
        let ok = !refused
            && (self.exit_status == 0 || (self.action == ServiceAction::Status && self.exit_status == 3));
        (!ok).then(|| {
            format!(
                "supervisorctl {}{} in {} failed (exit status {}): {}",
                self.action.verb(),
                self.service.as_deref().map(|s| format!(" {s}")).unwrap_or_default(),
                self.container,
                self.exit_status,
                self.output.trim()
            )
        })
    }
}

impl Deploy<'_> {
    /// `service.<action>`: runs `supervisorctl -c /etc/charly/supervisord.conf <verb> [service]`
    /// in the box's running container. `service` is required except for `status`.
    ///
    /// # Errors
    ///
    /// A container that is not running; an image that declares no services (no supervisord);
    /// a service the image does not declare (naming the box, the service and the declared
    /// ones); podman failures. Nothing runs in the container before these are checked.
    pub fn service(
        &self,
        box_name: &str,
        instance: Option<&str>,
        action: ServiceAction,
        service: Option<&str>,
    ) -> Result<ServiceReport, DeployError> {
        let target = Target::new(box_name, instance)?;
        let out = self.block(self.engine.running(&target))?;
        let init = out.label(label::INIT).unwrap_or_default();
        let declared: Vec<Service> =
            out.label(label::SERVICE).and_then(|v| serde_json::from_str(v).ok()).unwrap_or_default();
        let names: Vec<&str> = declared.iter().map(|s| s.name.as_str()).collect();
        if init != "supervisord" || declared.is_empty() {
            return Err(DeployError::Argument {
                argument: "box",
                value: target.key(),
                problem: format!(
                    "the image of {} ({}) declares no services (no {} label), so there is no supervisord to ask; \
                     declare them in a candy's `service:` node, then `charly update {}`",
                    target.container,
                    out.image,
                    label::SERVICE,
                    crate::engine::start_args(&target)
                ),
            });
        }
        if let Some(name) = service
            && !names.contains(&name)
        {
            return Err(DeployError::Argument {
                argument: "service",
                value: name.to_owned(),
                problem: format!(
                    "box {} (image {}) declares no such service; declared: {}",
                    target.key(),
                    out.image,
                    names.join(", ")
                ),
            });
        }
        if service.is_none() && action != ServiceAction::Status {
            return Err(DeployError::Argument {
                argument: "service",
                value: String::new(),
                problem: format!(
                    "service {} needs the service's name; box {} declares: {}",
                    action.verb(),
                    target.key(),
                    names.join(", ")
                ),
            });
        }
        let mut argv: Vec<String> =
            ["supervisorctl", "-c", SUPERVISORD_CONF, action.verb()].map(str::to_owned).to_vec();
        argv.extend(service.map(str::to_owned));
        let ran = self.block(self.engine.exec(&target, &[], &argv))?;
        // No supervisorctl in the container (its command replaced the box's init, `start --
        // CMD`, or its base has no supervisor): said as such, not as runc's words with the
        // exit status of a failed check (trial 29).
        if ran.status == 127 || ran.stderr.contains("executable file not found") {
            return Err(DeployError::Argument {
                argument: "box",
                value: target.key(),
                problem: format!(
                    "container {} has no supervisorctl, so no supervisord runs there to ask: its command \
                     replaced the box's init (`charly start {} -- CMD`), or its base image has no supervisor \
                     installed (a box with `service:` nodes needs one); start it without a command, or \
                     build it on a base with supervisor",
                    target.container,
                    crate::engine::start_args(&target)
                ),
            });
        }
        let output = format!("{}{}", ran.stdout, ran.stderr);
        let services = if action == ServiceAction::Status { parse_status(&ran.stdout) } else { Vec::new() };
        Ok(ServiceReport {
            unchanged: ran.status == 0 && already(action, &output),
            container: target.container,
            action,
            service: service.map(str::to_owned),
            exit_status: ran.status,
            output,
            services,
        })
    }
}

/// `supervisorctl status` lines: `name   STATE   description`.
fn parse_status(text: &str) -> Vec<ServiceState> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let name = words.next()?.to_owned();
            let state = words.next()?.to_owned();
            state.chars().all(|c| c.is_ascii_uppercase()).then(|| ServiceState {
                name,
                state,
                description: words.collect::<Vec<_>>().join(" "),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn status_lines() {
        let parsed = super::parse_status(
            "httpd                            RUNNING   pid 12, uptime 0:00:05\nworker                           STOPPED   Not started\nunix:///run/x refused\n",
        );
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[0].state, "RUNNING");
        assert_eq!(parsed[0].description, "pid 12, uptime 0:00:05");
        assert_eq!(parsed[1].name, "worker");
    }
}
