//! Endpoint resolution from saved `podman inspect` output (tests/fixtures/, see its README).

use std::collections::HashMap;

use charly::client::{Target, TransportKind};

use charly_cli::resolve::{
    self, Inspector, McpProvide, ResolveError, box_endpoints, container_image, parse_container_ports,
    parse_mcp_provide,
};

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Answers inspect calls from fixtures, like podman would for these names.
#[derive(Debug, Default)]
struct Saved {
    images: HashMap<&'static str, String>,
    containers: HashMap<&'static str, String>,
}

impl Inspector for Saved {
    fn image_inspect(&self, image: &str) -> Result<String, ResolveError> {
        self.images.get(image).cloned().ok_or_else(|| ResolveError::Podman {
            command: format!("podman image inspect {image}"),
            message: format!("Error: {image}: image not known"),
        })
    }
    fn container_inspect(&self, name: &str) -> Result<String, ResolveError> {
        self.containers.get(name).cloned().ok_or_else(|| ResolveError::Podman {
            command: format!("podman inspect --type container {name}"),
            message: format!("Error: no such container {name}"),
        })
    }
}

fn saved() -> Saved {
    let mut s = Saved::default();
    s.images.insert("localhost/charly/hello:latest", fixture("podman-image-inspect-hello.json"));
    s.images.insert("localhost/charly/plain:latest", fixture("podman-image-inspect-no-label.json"));
    s.containers.insert("charly-hello", fixture("podman-inspect-charly-hello-running.json"));
    s.containers.insert("charly-hello-2", fixture("podman-inspect-charly-hello-2-running.json"));
    s
}

#[test]
fn the_label_is_read_from_image_inspect() {
    let provides = parse_mcp_provide(&fixture("podman-image-inspect-hello.json")).unwrap();
    assert_eq!(
        provides,
        [
            McpProvide {
                name: "hello".into(),
                url: "http://{{.ContainerName}}:18765/mcp".into(),
                transport: "http".into()
            },
            McpProvide {
                name: "legacy".into(),
                url: "http://localhost:3001/sse".into(),
                transport: "sse".into()
            },
        ]
    );
    assert!(parse_mcp_provide(&fixture("podman-image-inspect-no-label.json")).unwrap().is_empty());
}

#[test]
fn container_inspect_gives_state_ports_and_image() {
    let created = parse_container_ports(&fixture("podman-inspect-charly-hello-created.json")).unwrap();
    assert_eq!(created.name, "charly-hello");
    assert!(!created.running);
    assert_eq!(created.status, "created");
    let ports: Vec<((u16, String), u16)> = created.published.into_iter().collect();
    assert_eq!(ports, [((3001, "tcp".to_owned()), 40002), ((18765, "tcp".to_owned()), 40001)]);
    let running = parse_container_ports(&fixture("podman-inspect-charly-hello-running.json")).unwrap();
    assert!(running.running);
    assert_eq!(
        container_image(&fixture("podman-inspect-charly-hello-running.json")).unwrap(),
        "localhost/charly/hello:latest"
    );
}

#[test]
fn a_running_box_resolves_to_published_ports() {
    let endpoints = box_endpoints(&saved(), "hello", None, None).unwrap();
    let got: Vec<(String, String, TransportKind)> =
        endpoints.iter().map(|e| (e.name.clone(), e.location(), e.transport())).collect();
    assert_eq!(
        got,
        [
            ("hello".to_owned(), "http://127.0.0.1:40001/mcp".to_owned(), TransportKind::StreamableHttp),
            ("legacy".to_owned(), "http://127.0.0.1:40002/sse".to_owned(), TransportKind::Sse),
        ]
    );
    assert!(matches!(&endpoints[0].target, Target::Http { .. }));
    let one = resolve::select(endpoints, Some("legacy"), "box hello").unwrap();
    assert_eq!(one.location(), "http://127.0.0.1:40002/sse");
}

#[test]
fn several_servers_need_a_name() {
    let endpoints = box_endpoints(&saved(), "hello", None, None).unwrap();
    let err = resolve::select(endpoints, None, "box hello").unwrap_err();
    assert_eq!(
        err.to_string(),
        "box hello provides several mcp servers (hello, legacy): choose one with --mcp-name"
    );
}

#[test]
fn an_unpublished_port_says_how_to_publish_it() {
    let err = box_endpoints(&saved(), "hello", Some("2"), Some("localhost/charly/hello:latest")).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "mcp server \"hello\" listens on port 18765 of container charly-hello-2, which is not published to \
             the host: {}",
            resolve::publish_hint("hello", Some("2"), 18765)
        )
    );
    assert!(err.to_string().contains("`charly update hello -i 2`"), "{err}");
}

#[test]
fn a_stopped_container_and_a_bare_image_are_errors() {
    let mut s = saved();
    s.containers.insert("charly-hello", fixture("podman-inspect-charly-hello-created.json"));
    let err = box_endpoints(&s, "hello", None, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "container charly-hello is created: start the box first (mcp checks need a running container)"
    );
    let err = box_endpoints(&saved(), "hello", None, Some("localhost/charly/plain:latest")).unwrap_err();
    assert!(err.to_string().contains("has no ai.opencharly.mcp_provide label"), "{err}");
    let err = box_endpoints(&saved(), "nope", None, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "podman inspect --type container charly-nope: Error: no such container charly-nope"
    );
}

#[test]
fn garbage_inspect_output_is_an_error() {
    assert!(matches!(parse_mcp_provide("not json"), Err(ResolveError::Inspect(_))));
    assert!(matches!(parse_container_ports("[]"), Err(ResolveError::Inspect(_))));
    let bad_label = r#"[{"Labels": {"ai.opencharly.mcp_provide": "{\"name\": 1}"}}]"#;
    assert!(matches!(parse_mcp_provide(bad_label), Err(ResolveError::Label(_))));
}

#[tokio::test]
async fn a_mcp_json_stdio_server_answers() {
    let dir = std::env::temp_dir().join(format!("charly-mcp-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(".mcp.json");
    let config = serde_json::json!({"mcpServers": {
        "everything": {"command": crate::support::node(), "args": [crate::support::everything_entry(), "stdio"]},
        "elsewhere": {"type": "sse", "url": "http://127.0.0.1:9/sse"}
    }});
    std::fs::write(&path, config.to_string()).unwrap();
    let servers = resolve::load_mcp_json(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let err = resolve::select(servers.clone(), None, ".mcp.json").unwrap_err();
    assert_eq!(
        err.to_string(),
        ".mcp.json provides several mcp servers (everything, elsewhere): choose one with --mcp-name"
    );
    let endpoint = resolve::select(servers, Some("everything"), ".mcp.json").unwrap();
    let opts = crate::support::options(std::time::Duration::from_secs(30));
    let pong = charly_cli::probe::ping(&endpoint, &opts).await.unwrap();
    assert_eq!(pong.to_string(), "ok\n");
}
