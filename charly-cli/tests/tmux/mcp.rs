//! `tmux.*` and `record.*` as tools of charly's own server over Streamable HTTP (in this
//! process, so on tmux server `-L test-tm-mcp-<pid>`, killed at the end): `tmux.shell` and
//! `tmux.capture` return the pane at once, never waiting on a terminal; paths stay in the
//! project.

use std::time::{Duration, Instant};

use charly::client::{ConnectOptions, Endpoint, TransportKind, connect};
use charly::server::{HttpOptions, ToolNameStyle};
use serde_json::{Value, json};

/// Kills the test's tmux server, and removes its socket, at drop.
struct Server(String);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .args(["-L", &self.0, "kill-server"])
            .env_remove("TMUX")
            .stderr(std::process::Stdio::null())
            .status();
        // tmux leaves the socket file of a server that exited with its last session.
        use std::os::unix::fs::MetadataExt as _;
        let uid = std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(0);
        let dir = std::env::var_os("TMUX_TMPDIR").map_or_else(|| "/tmp".into(), std::path::PathBuf::from);
        let _ = std::fs::remove_file(dir.join(format!("tmux-{uid}")).join(&self.0));
    }
}

fn lines(result: &charly::server::rmcp::model::CallToolResult) -> Vec<String> {
    let structured = result.structured_content.clone().expect("structured content");
    structured["lines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap().to_owned()).collect()
}

fn text(result: &charly::server::rmcp::model::CallToolResult) -> String {
    serde_json::to_string(&result.content).unwrap()
}

#[test]
fn the_tmux_tools_return_panes_without_waiting_on_a_terminal() {
    let socket = format!("test-tm-mcp-{}", std::process::id());
    let _server = Server(socket.clone());
    let project = tempfile::tempdir().unwrap();
    charly_cli::project::write_sample(project.path()).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let server = charly_cli::serve::server_with(project.path(), false, ToolNameStyle::Dotted).unwrap();
        let handle =
            server.serve_http(HttpOptions::default().listen("127.0.0.1:0".parse().unwrap())).await.unwrap();
        let endpoint = Endpoint::url(&handle.url(), TransportKind::StreamableHttp).unwrap();
        let client = connect(&endpoint, &ConnectOptions::default()).await.unwrap();
        let call = |name: &'static str, args: Value| {
            let client = &client;
            async move {
                let started = Instant::now();
                let call = client.call_tool(name, args.as_object().cloned());
                let result = tokio::time::timeout(Duration::from_secs(30), call)
                    .await
                    .unwrap_or_else(|_| panic!("{name} did not answer within 30 s"))
                    .unwrap();
                (result, started.elapsed())
            }
        };
        let tools = client.list_tools().await.unwrap();
        let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
        for leaf in ["tmux.shell", "tmux.attach", "tmux.capture", "tmux.list", "record.start", "record.stop"]
        {
            assert!(names.contains(&leaf.to_owned()), "{leaf} is not listed");
        }

        // shell: the session made detached, its pane returned (a prompt), no terminal waited on.
        let (shell, took) = call("tmux.shell", json!({"target": ".", "socket": socket})).await;
        assert_ne!(shell.is_error, Some(true), "{shell:?}");
        let structured = shell.structured_content.clone().unwrap();
        assert_eq!(
            (structured["created"].as_bool(), structured["attached"].as_bool()),
            (Some(true), Some(false))
        );
        assert_eq!(structured["socket"], socket.as_str());
        assert!(!lines(&shell).is_empty(), "{shell:?}");
        eprintln!("tmux: tmux.shell as a tool took {took:?}");

        let args = json!({"target": ".", "socket": socket, "session": "shell",
                          "keys": ["echo mcp-$((6*7)) 'x;'"], "literal": true, "enter": true});
        let (sent, _) = call("tmux.send", args).await;
        assert_ne!(sent.is_error, Some(true), "{sent:?}");
        let started = Instant::now();
        loop {
            let (capture, _) =
                call("tmux.capture", json!({"target": ".", "socket": socket, "session": "shell"})).await;
            assert_ne!(capture.is_error, Some(true), "{capture:?}");
            if lines(&capture).iter().any(|l| l == "mcp-42 x;") {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(10), "{capture:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let (attach, _) =
            call("tmux.attach", json!({"target": ".", "socket": socket, "session": "shell"})).await;
        assert_ne!(attach.is_error, Some(true), "{attach:?}");
        assert!(lines(&attach).iter().any(|l| l == "mcp-42 x;"), "{attach:?}");

        // Bad input: error results naming the argument or the session; the server goes on.
        let (bad, _) = call("tmux.capture", json!({"target": ".", "socket": socket, "session": "a.b"})).await;
        assert_eq!(bad.is_error, Some(true));
        assert!(text(&bad).contains("argument `session`"), "{bad:?}");
        let (missing, _) =
            call("tmux.attach", json!({"target": ".", "socket": socket, "session": "nope"})).await;
        assert_eq!(missing.is_error, Some(true));
        assert!(text(&missing).contains("there is no tmux session \\\"nope\\\""), "{missing:?}");

        // A recording: stop refuses an output outside the project before stopping anything.
        let (started_rec, _) =
            call("record.start", json!({"target": ".", "socket": socket, "name": "mcp"})).await;
        assert_ne!(started_rec.is_error, Some(true), "{started_rec:?}");
        let file = started_rec.structured_content.clone().unwrap()["file"].as_str().unwrap().to_owned();
        let outside = tempfile::tempdir().unwrap();
        let path = outside.path().join("x.cast").display().to_string();
        let (refused, _) =
            call("record.stop", json!({"target": ".", "socket": socket, "name": "mcp", "output": path}))
                .await;
        assert_eq!(refused.is_error, Some(true));
        assert!(text(&refused).contains("argument `output`"), "{refused:?}");
        assert!(!outside.path().join("x.cast").exists());
        let (listed, _) = call("record.list", json!({"target": ".", "socket": socket})).await;
        assert_eq!(listed.structured_content.unwrap()["recordings"][0]["running"], true);
        let (stopped, _) = call(
            "record.stop",
            json!({"target": ".", "socket": socket, "name": "mcp", "output": "rec/mcp.cast"}),
        )
        .await;
        assert_eq!(stopped.is_error, Some(true), "rec/ does not exist yet: {stopped:?}");
        std::fs::create_dir(project.path().join("rec")).unwrap();
        let (stopped, _) = call(
            "record.stop",
            json!({"target": ".", "socket": socket, "name": "mcp", "output": "rec/mcp.cast"}),
        )
        .await;
        assert_ne!(stopped.is_error, Some(true), "{stopped:?}");
        let (header, _) = crate::record::read_cast(&project.path().join("rec/mcp.cast"));
        assert_eq!(header["version"], 2);
        let _ = std::fs::remove_file(&file);

        let (killed, _) =
            call("tmux.kill", json!({"target": ".", "socket": socket, "session": "shell"})).await;
        assert_ne!(killed.is_error, Some(true), "{killed:?}");
        // The server exits with its last session; a list right after finds none.
        let (listed, _) = call("tmux.list", json!({"target": ".", "socket": socket})).await;
        assert_ne!(listed.is_error, Some(true), "{listed:?}");
        assert_eq!(listed.structured_content.unwrap()["sessions"], json!([]));
        client.close().await;
        handle.shutdown().await.unwrap();
    });
}
