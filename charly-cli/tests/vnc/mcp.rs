//! `check.vnc.*` as tools of charly's own server over Streamable HTTP: the screenshot is
//! `image` content (the desktop the test painted) beside its text and structured content; bad
//! input is an error result naming the argument, and the server answers after.

use base64::Engine as _;
use charly::client::{Client, ConnectOptions, Endpoint, TransportKind, connect};
use charly::server::{HttpOptions, ServerHandle, ToolNameStyle};
use serde_json::json;

use crate::lab::Lab;

/// charly's server for the project at `project` over Streamable HTTP on 127.0.0.1 (served
/// while the handle lives), and a client connected to it.
async fn served(project: &std::path::Path) -> (ServerHandle, Client) {
    let server = charly_cli::serve::server_with(project, false, ToolNameStyle::Dotted).unwrap();
    let handle =
        server.serve_http(HttpOptions::default().listen("127.0.0.1:0".parse().unwrap())).await.unwrap();
    let endpoint = Endpoint::url(&handle.url(), TransportKind::StreamableHttp).unwrap();
    let client = connect(&endpoint, &ConnectOptions::default()).await.unwrap();
    (handle, client)
}

#[test]
fn the_screenshot_tool_returns_the_desktop_as_image_content() {
    let lab = Lab::xtigervnc("None");
    lab.x("xsetroot", &["-solid", "#20a040"]);
    let project = tempfile::tempdir().unwrap();
    charly_cli::project::write_sample(project.path()).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (handle, client) = served(project.path()).await;
        let args = json!({"target": ".", "vnc_addr": lab.addr, "file": "desk.png"});
        let result = client.call_tool("check.vnc.screenshot", args.as_object().cloned()).await.unwrap();
        assert_ne!(result.is_error, Some(true), "{result:?}");
        let content = serde_json::to_value(&result.content).unwrap();
        let image = content.as_array().unwrap().iter().find(|c| c["type"] == "image").expect("image content");
        assert_eq!(image["mimeType"], "image/png");
        let png = base64::engine::general_purpose::STANDARD.decode(image["data"].as_str().unwrap()).unwrap();
        // The image is the painted desktop: 320x240, every pixel the root colour.
        let mut reader = png::Decoder::new(std::io::Cursor::new(&png)).read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (320, 240));
        let step = info.color_type.samples();
        assert!(
            buf[..info.buffer_size()].chunks(step).all(|p| p[..3] == [0x20, 0xa0, 0x40]),
            "not all #20a040"
        );
        let structured = result.structured_content.clone().unwrap();
        assert_eq!(structured["bytes"], png.len());
        assert_eq!((structured["width"].as_u64(), structured["height"].as_u64()), (Some(320), Some(240)));
        // Written inside the project, as a served call's paths are.
        assert_eq!(std::fs::read(project.path().join("desk.png")).unwrap(), png);

        // A file outside the project: an error naming the argument, nothing written.
        let outside = tempfile::tempdir().unwrap();
        let path = outside.path().join("x.png").display().to_string();
        let args = json!({"target": ".", "vnc_addr": lab.addr, "file": path});
        let result = client.call_tool("check.vnc.screenshot", args.as_object().cloned()).await.unwrap();
        assert_eq!(result.is_error, Some(true), "{result:?}");
        assert!(serde_json::to_string(&result.content).unwrap().contains("argument `file`"), "{result:?}");
        assert!(!outside.path().join("x.png").exists());
        // A key outside the table: an error result naming it; the next call works.
        let args = json!({"target": ".", "vnc_addr": lab.addr, "key_name": "Hyper_Q"});
        let result = client.call_tool("check.vnc.key", args.as_object().cloned()).await.unwrap();
        assert_eq!(result.is_error, Some(true));
        assert!(serde_json::to_string(&result.content).unwrap().contains("Hyper_Q"), "{result:?}");
        let args = json!({"target": ".", "vnc_addr": lab.addr});
        let result = client.call_tool("check.vnc.status", args.as_object().cloned()).await.unwrap();
        assert_ne!(result.is_error, Some(true), "{result:?}");
        assert_eq!(result.structured_content.unwrap()["width"], 320);
        client.close().await;
        handle.shutdown().await.unwrap();
    });
}

/// A plan's `artifact:` over MCP lies beneath the project root as every other path a served
/// call names (trial 2, H2: `artifact: /abs/x.png` and `artifact: ../out/x.png` were written
/// outside the project, and the checks passed); a missing directory beneath the root is made
/// (M13). On a terminal a relative artifact is relative to the project directory (`-C`), its
/// directory made too.
#[test]
fn plan_artifacts_over_mcp_stay_in_the_project() {
    let lab = Lab::x11vnc(320, 240, None);
    let project = tempfile::tempdir().unwrap();
    charly_cli::project::write_sample(project.path()).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let absolute = outside.path().join("abs.png");
    let escape = format!("../{}/rel.png", outside.path().file_name().unwrap().to_string_lossy());
    let plan = format!(
        "abs:\n  check: absolute\n  vnc: screenshot\n  vnc_addr: {a}\n  artifact: {abs}\n\
         rel:\n  check: dot-dot\n  vnc: screenshot\n  vnc_addr: {a}\n  artifact: {escape}\n\
         nested:\n  check: a new directory in the project\n  vnc: screenshot\n  vnc_addr: {a}\n  artifact: shots/day1/desk.png\n",
        a = lab.addr,
        abs = absolute.display(),
    );
    std::fs::write(project.path().join("plan.yml"), &plan).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (handle, client) = served(project.path()).await;
        let args = json!({"target": "plan.yml"});
        let result = client.call_tool("check.run", args.as_object().cloned()).await.unwrap();
        let report = result.structured_content.clone().expect("a report");
        let verdict = |name: &str| {
            let r = report["results"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap().clone();
            (r["verdict"].as_str().unwrap().to_owned(), r.to_string())
        };
        let (v, r) = verdict("abs");
        assert_eq!(v, "fail", "{r}");
        assert!(r.contains(&format!("artifact {}", absolute.display())), "{r}");
        let (v, r) = verdict("rel");
        assert_eq!(v, "fail", "{r}");
        assert!(r.contains(&format!("artifact {escape}")), "{r}");
        assert!(
            !absolute.exists() && !outside.path().join("rel.png").exists(),
            "written outside the project"
        );
        let (v, r) = verdict("nested");
        assert_eq!(v, "pass", "{r}");
        let png = std::fs::read(project.path().join("shots/day1/desk.png")).unwrap();
        assert_eq!(&png[..4], b"\x89PNG");
        client.close().await;
        handle.shutdown().await.unwrap();
    });
    // On a terminal, from another directory: relative to the project (-C), directory made.
    let cwd = tempfile::tempdir().unwrap();
    let plan = format!(
        "nested:\n  check: a new directory\n  vnc: screenshot\n  vnc_addr: {}\n  artifact: out/term/desk.png\n",
        lab.addr
    );
    std::fs::write(project.path().join("term.yml"), plan).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_charly"))
        .args(["-C", &project.path().display().to_string(), "check", "run", "term.yml"])
        .current_dir(cwd.path())
        .env("HOME", cwd.path())
        .env_remove("VNC_PASSWORD")
        .env_remove("CHARLY_PROJECT_DIR")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(project.path().join("out/term/desk.png").is_file(), "{text}");
    assert!(!cwd.path().join("out").exists());
}

/// `check.vnc.passwd` as a tool never reads the server's stdin (over stdio it is the protocol
/// stream: the call hung and swallowed the next request), and refuses a box that is not the
/// project's and an instance no container can have (they stored `charly/vnc/<anything>`);
/// the server answers after.
#[test]
fn passwd_as_a_tool_needs_generate_and_a_box_of_the_project() {
    let project = tempfile::tempdir().unwrap();
    charly_cli::project::write_sample(project.path()).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (_handle, client) = served(project.path()).await;
        let text =
            |r: &charly::server::rmcp::model::CallToolResult| serde_json::to_string(&r.content).unwrap();
        let call = |args: serde_json::Value| client.call_tool("check.vnc.passwd", args.as_object().cloned());
        let r = call(json!({"target": "."})).await.unwrap();
        assert_eq!(r.is_error, Some(true), "{r:?}");
        assert!(text(&r).contains("as a tool, give `generate: true`"), "{}", text(&r));
        let r = call(json!({"target": "nosuch-dl", "generate": true})).await.unwrap();
        assert_eq!(r.is_error, Some(true), "{r:?}");
        assert!(text(&r).contains("box \\\"nosuch-dl\\\" is not a box of this project"), "{}", text(&r));
        let r = call(json!({"target": "hello", "instance": "../x", "generate": true})).await.unwrap();
        assert_eq!(r.is_error, Some(true), "{r:?}");
        assert!(text(&r).contains("passwd: instance \\\"../x\\\""), "{}", text(&r));
        let r = client.call_tool("version", None).await.unwrap();
        assert_ne!(r.is_error, Some(true), "{r:?}");
    });
}
