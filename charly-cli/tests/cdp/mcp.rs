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
        let structured = result.structured_content.unwrap();
        // A string is carried once: `value` (`text` is for values that are not strings).
        assert_eq!((&structured["value"], structured.get("text")), (&json!("Form"), None));
        // structuredContent holds the value as JSON, not its JSON text.
        let args = json!({"target": ".", "tab": tab, "cdp_url": lab.cdp_url(), "expression": "({n: 1.5, l: ['a']})"});
        let result = client.call_tool("check.cdp.eval", args.as_object().cloned()).await.unwrap();
        assert_eq!(result.structured_content.unwrap()["value"], json!({"n": 1.5, "l": ["a"]}));
        client.close().await;
        handle.shutdown().await.unwrap();
    });
}

/// The server keeps a tab's DevTools socket open between calls: a remote object made by one
/// call is still there for the next (object ids live as long as the DevTools session that
/// made them). A tab closed since is named as gone, and a new tab is reached.
#[test]
fn calls_to_one_tab_share_a_kept_socket_and_a_closed_tab_is_named() {
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
        let call = |name: &'static str, args: serde_json::Value| {
            let client = &client;
            async move { client.call_tool(name, args.as_object().cloned()).await.unwrap() }
        };
        let raw = |method: &str, params: serde_json::Value| {
            json!({"target": ".", "tab": tab, "cdp_url": lab.cdp_url(), "method": method, "params": params.to_string()})
        };
        let made = call("check.cdp.raw", raw("Runtime.evaluate", json!({"expression": "({answer: 42})"}))).await;
        assert_ne!(made.is_error, Some(true), "{made:?}");
        let id = made.structured_content.unwrap()["result"]["result"]["objectId"].as_str().unwrap().to_owned();
        for _ in 0..3 {
            let props = call("check.cdp.raw", raw("Runtime.getProperties", json!({"objectId": id, "ownProperties": true}))).await;
            assert_ne!(props.is_error, Some(true), "the object made by the previous call is gone: {props:?}");
            assert!(props.structured_content.unwrap().to_string().contains("\"answer\""));
        }

        let closed = call("check.cdp.close", json!({"target": ".", "tab": tab, "cdp_url": lab.cdp_url()})).await;
        assert_ne!(closed.is_error, Some(true), "{closed:?}");
        let gone = call("check.cdp.eval", json!({"target": ".", "tab": tab, "cdp_url": lab.cdp_url(), "expression": "1"})).await;
        assert_eq!(gone.is_error, Some(true));
        let text = serde_json::to_string(&gone.content).unwrap();
        assert!(text.contains(&tab), "the closed tab is not named: {text}");

        let other = lab.open("/form");
        let title = call("check.cdp.eval", json!({"target": ".", "tab": other, "cdp_url": lab.cdp_url(), "expression": "document.title"})).await;
        assert_eq!(title.structured_content.unwrap()["value"], "Form");
        client.close().await;
        handle.shutdown().await.unwrap();
    });
}

/// Large results (trial 2, M3): a 6 MiB string comes through charly's own client (it failed
/// with "the connection to the server is closed": rmcp's client reads SSE events of at most
/// 16 MiB, and the result carried the string three times); an answer over the 16 MiB charly
/// reads of one CDP message says what to ask for instead, and the session goes on.
#[test]
fn large_results_come_through_and_too_large_ones_say_what_to_do() {
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
        let eval = |expression: &str| json!({"target": ".", "tab": tab, "cdp_url": lab.cdp_url(), "expression": expression});
        let big = client.call_tool("check.cdp.eval", eval("'x'.repeat(6 * 1024 * 1024)").as_object().cloned()).await;
        let big = big.expect("a 6 MiB result reaches the client");
        assert_ne!(big.is_error, Some(true));
        assert_eq!(big.structured_content.unwrap()["value"].as_str().map(str::len), Some(6 << 20));
        let huge = client
            .call_tool("check.cdp.eval", eval("'x'.repeat(20 * 1024 * 1024)").as_object().cloned())
            .await
            .unwrap();
        assert_eq!(huge.is_error, Some(true));
        let text = serde_json::to_string(&huge.content).unwrap();
        assert!(
            text.contains("the browser's answer to Runtime.evaluate is")
                && text.contains("more than the 16777216 bytes charly reads of one CDP message")
                && text.contains("a smaller expression"),
            "{text}"
        );
        let title = client.call_tool("check.cdp.eval", eval("document.title").as_object().cloned()).await.unwrap();
        assert_eq!(title.structured_content.unwrap()["value"], "Form");
        client.close().await;
        handle.shutdown().await.unwrap();
    });
}
