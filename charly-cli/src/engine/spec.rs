//! [`RunSpec`]: everything `podman run` is given for a box's container. It is stored on the
//! container as the `ai.opencharly.run` label (JSON), so `update` recreates the container as it
//! was started, with the new image; quadlet units (`config setup`) will be written from it too.

use serde::{Deserialize, Serialize};

use super::names::Target;
use super::ps::{BOX_LABEL, INSTANCE_LABEL, RUN_LABEL};

/// A published port: `<host_ip>:<host>:<container>/<protocol>`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PortMap {
    /// The host address (`127.0.0.1` unless configured otherwise).
    pub host_ip: String,
    /// The host port.
    pub host: u16,
    /// The container port.
    pub container: u16,
    /// `tcp` or `udp`.
    pub protocol: String,
}

impl PortMap {
    /// `podman run -p`'s spelling.
    pub fn publish(&self) -> String {
        format!("{}:{}:{}/{}", self.host_ip, self.host, self.container, self.protocol)
    }
}

/// A named volume: podman volume `name` at `path` in the container.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Volume {
    /// The podman volume name (`charly-<box>[-<instance>]-<short name>`).
    pub name: String,
    /// Where it is mounted.
    pub path: String,
}

/// A bind mount: host directory `host` at `path`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Bind {
    /// The absolute host path.
    pub host: String,
    /// Where it is mounted.
    pub path: String,
    /// Mounted read-only.
    #[serde(default)]
    pub read_only: bool,
}

/// A podman secret the container sees as an environment variable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SecretEnv {
    /// The podman secret (`charly-<box>[-<instance>]-<NAME>`, made by `config setup`).
    pub secret: String,
    /// The variable in the container.
    pub env: String,
}

/// The flags of the `start` that made a container (its binds resolved), kept in its run
/// label: `update` recreates the container from these, the new image's labels and the deploy
/// entry as it is now, as a `stop` and a `start` with the same flags would.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Given {
    /// `--env` lines.
    #[serde(default)]
    pub env: Vec<String>,
    /// `--port` values.
    #[serde(default)]
    pub ports: Vec<String>,
    /// `--volume` values.
    #[serde(default)]
    pub volumes: Vec<String>,
    /// `--bind` values, resolved.
    #[serde(default)]
    pub binds: Vec<Bind>,
    /// The command given (empty: the box's own).
    #[serde(default)]
    pub command: Vec<String>,
}

/// What a box's container runs with.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSpec {
    /// The image reference.
    pub image: String,
    /// `KEY=VALUE` lines.
    #[serde(default)]
    pub env: Vec<String>,
    /// Published ports.
    #[serde(default)]
    pub ports: Vec<PortMap>,
    /// Named volumes.
    #[serde(default)]
    pub volumes: Vec<Volume>,
    /// Bind mounts.
    #[serde(default)]
    pub binds: Vec<Bind>,
    /// The command (empty: the image's own).
    #[serde(default)]
    pub command: Vec<String>,
    /// Run a tiny init as PID 1 (`--init`), so a keep-alive `sleep` stops on SIGTERM.
    #[serde(default)]
    pub init: bool,
    /// podman secrets given as environment variables (`--secret NAME,type=env,target=VAR`).
    #[serde(default)]
    pub secrets: Vec<SecretEnv>,
    /// `--env-file` (absolute).
    #[serde(default)]
    pub env_file: Option<String>,
    /// `--network`.
    #[serde(default)]
    pub network: Option<String>,
    /// Confinement flags (`--user`, `--cap-add`, `--read-only`, ...), from the image's
    /// `ai.opencharly.security` label.
    #[serde(default)]
    pub security: Vec<String>,
    /// The `start` flags it was made from (containers started before charly kept them: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub given: Option<Given>,
}

impl RunSpec {
    /// The label value (JSON).
    pub fn to_label(&self) -> String {
        serde_json::to_string(self).expect("a RunSpec serialises")
    }

    /// The spec stored in a container's labels, when it has one that parses.
    pub fn from_label(value: &str) -> Option<RunSpec> {
        serde_json::from_str(value).ok()
    }

    /// The `podman run` arguments for `target`: detached, never pulling, labelled.
    pub fn run_args(&self, target: &Target) -> Vec<String> {
        let mut args: Vec<String> = ["run", "--detach", "--pull=never", "--name"].map(str::to_owned).to_vec();
        args.push(target.container.clone());
        let mut label = |k: &str, v: &str| args.extend(["--label".to_owned(), format!("{k}={v}")]);
        label(BOX_LABEL, &target.box_name);
        if let Some(instance) = &target.instance {
            label(INSTANCE_LABEL, instance);
        }
        label(RUN_LABEL, &self.to_label());
        if self.init {
            args.push("--init".into());
        }
        if let Some(network) = &self.network {
            args.extend(["--network".into(), network.clone()]);
        }
        args.extend(self.security.iter().cloned());
        for port in &self.ports {
            args.extend(["--publish".into(), port.publish()]);
        }
        if let Some(file) = &self.env_file {
            args.extend(["--env-file".into(), file.clone()]);
        }
        for env in &self.env {
            args.extend(["--env".into(), env.clone()]);
        }
        for s in &self.secrets {
            args.extend(["--secret".into(), format!("{},type=env,target={}", s.secret, s.env)]);
        }
        for volume in &self.volumes {
            args.extend(["--volume".into(), format!("{}:{}", volume.name, volume.path)]);
        }
        for bind in &self.binds {
            let ro = if bind.read_only { ":ro" } else { "" };
            args.extend(["--volume".into(), format!("{}:{}{ro}", bind.host, bind.path)]);
        }
        args.push(self.image.clone());
        args.extend(self.command.iter().cloned());
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_arguments() {
        let target = Target::new("web", Some("2")).unwrap();
        let spec = RunSpec {
            image: "localhost/web:latest".into(),
            env: vec!["A=1".into()],
            ports: vec![PortMap {
                host_ip: "127.0.0.1".into(),
                host: 8080,
                container: 80,
                protocol: "tcp".into(),
            }],
            volumes: vec![Volume { name: "charly-web-2-data".into(), path: "/data".into() }],
            binds: vec![Bind { host: "/srv".into(), path: "/srv".into(), read_only: true }],
            command: vec!["sleep".into(), "infinity".into()],
            init: true,
            secrets: vec![SecretEnv { secret: "charly-web-2-TOKEN".into(), env: "TOKEN".into() }],
            env_file: None,
            network: None,
            security: vec!["--read-only".into()],
            given: Some(Given { env: vec!["A=1".into()], ..Given::default() }),
        };
        let args = spec.run_args(&target);
        let text = args.join(" ");
        assert!(text.starts_with("run --detach --pull=never --name charly-web-2 --label ai.opencharly.box=web --label ai.opencharly.instance=2 --label ai.opencharly.run={"), "{text}");
        assert!(text.ends_with("--init --read-only --publish 127.0.0.1:8080:80/tcp --env A=1 --secret charly-web-2-TOKEN,type=env,target=TOKEN --volume charly-web-2-data:/data --volume /srv:/srv:ro localhost/web:latest sleep infinity"), "{text}");
        let label = args.iter().find_map(|a| a.strip_prefix("ai.opencharly.run=")).unwrap();
        assert_eq!(RunSpec::from_label(label).unwrap(), spec);
    }
}
