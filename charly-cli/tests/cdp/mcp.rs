//! `check.cdp.*` as tools of charly's own server: the screenshot is `image` content beside its
//! text and structured content; an error is an error result, and the server answers after.

use base64::Engine as _;
use charly::client::{ConnectOptions, Endpoint, TransportKind, connect};
use charly::server::{HttpOptions, ToolNameStyle};
use serde_json::json;

use crate::lab::Lab;

#[test]
fn the_screenshot_tool_returns_the_png_as_image_content() {
    let lab = Lab::new();
    let tab = lab.open("/form");
    let project = tempfile::tempdir().unwrap();
    charly_cli::project::write_sample(project.path()).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let server = charly_cli::serve::server_with(project.path(), false, ToolNameStyle::Dotted).unwrap();
        let handle =
            server.serve_http(HttpOptions::default().listen("127.0.0.1:0".parse().unwrap())).await.unwrap();
        let endpoint = Endpoint::url(&handle.url(), TransportKind::StreamableHttp).unwrap();
        let client = connect(&endpoint, &ConnectOptions::default()).await.unwrap();
        let args = json!({"target": ".", "tab": tab, "cdp_url": lab.cdp_url(), "file": "shot.png"});
        let result = client.call_tool("check.cdp.screenshot", args.as_object().cloned()).await.unwrap();
        assert_ne!(result.is_error, Some(true), "{result:?}");
        let content = serde_json::to_value(&result.content).unwrap();
        let image = content.as_array().unwrap().iter().find(|c| c["type"] == "image").expect("image content");
        assert_eq!(image["mimeType"], "image/png");
        let png = base64::engine::general_purpose::STANDARD.decode(image["data"].as_str().unwrap()).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let structured = result.structured_content.clone().unwrap();
        assert_eq!(structured["bytes"], png.len());
        // Written inside the project, as a served call's paths are.
        assert_eq!(std::fs::read(project.path().join("shot.png")).unwrap(), png);

        // A script that throws: an error result naming the exception; the next call works.
        let args = json!({"target": ".", "tab": tab, "cdp_url": lab.cdp_url(), "expression": "throw 'nope'"});
        let result = client.call_tool("check.cdp.eval", args.as_object().cloned()).await.unwrap();
        assert_eq!(result.is_error, Some(true));
        assert!(
            serde_json::to_string(&result.content).unwrap().contains("JavaScript threw: nope"),
            "{result:?}"
        );
        let args =
            json!({"target": ".", "tab": tab, "cdp_url": lab.cdp_url(), "expression": "document.title"});
        let result = client.call_tool("check.cdp.eval", args.as_object().cloned()).await.unwrap();
        assert_eq!(result.structured_content.unwrap()["text"], "Form");
        client.close().await;
        handle.shutdown().await.unwrap();
    });
}
