//! Item 3: a process killed in the middle of an edit leaves the old file or the new one, and
//! nothing that `box.cat`, resources, a directory listing or `git status` would show.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::util::{StdioServer, text_of};

/// How many times a server is killed mid-write.
const KILLS: usize = 3;
/// The size of the file being written when the server is killed: as large as one request may
/// be (charly reads requests of at most `MAX_REQUEST_BYTES`, 4 MiB, on stdio as over HTTP),
/// less room for the JSON-RPC envelope.
const BIG: usize = (4 << 20) - 4096;

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(root)
        .output()
        .expect("git runs (apt-get install git)");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Whether process `pid` holds a file open for writing in `dir` that is not one of the
/// project's files: the temporary file of an edit in progress (`/dir/#123 (deleted)` for an
/// `O_TMPFILE`, `/dir/.charly-*.tmp` for the fallback).
fn writing_a_temporary(pid: u32, dir: &Path) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
    fds.flatten().filter_map(|fd| std::fs::read_link(fd.path()).ok()).any(|target| {
        target.parent() == Some(dir) && {
            let name = target.file_name().unwrap_or_default().to_string_lossy().into_owned();
            name.starts_with('#') || name.starts_with(".charly-")
        }
    })
}

/// A real `charly mcp serve --stdio` is sent a `box.write` of almost 4 MiB over its pipe and killed
/// with SIGKILL while it writes the temporary file (seen in /proc/<pid>/fd), three times. Each
/// time the file is the old one or the new one in full, the directory lists only the project's
/// files, and `git status` shows at most the file written.
#[test]
fn kill_9_during_a_write_leaves_old_or_new_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    charly_cli::project::write_sample(&root).unwrap();
    std::fs::write(root.join("big.txt"), "old\n").unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "start"]);
    let listing = |root: &Path| {
        let mut names: Vec<String> = std::fs::read_dir(root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let before = listing(&root);
    let new = "n".repeat(BIG);
    let mut killed_mid_write = 0;
    for round in 0..KILLS {
        let mut server = StdioServer::start(&root);
        server.call(1, "box.write", json!({"path": "big.txt", "content": new}));
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut seen = false;
        while Instant::now() < deadline {
            if writing_a_temporary(server.pid(), &root) {
                seen = true;
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        server.kill();
        killed_mid_write += usize::from(seen);
        let text = std::fs::read_to_string(root.join("big.txt")).unwrap();
        assert!(
            text == "old\n" || text == new,
            "round {round}: big.txt is {} bytes, neither old nor new",
            text.len()
        );
        assert_eq!(listing(&root), before, "round {round}: something was left in the project");
        let status = git(&root, &["status", "--porcelain", "--untracked-files=all"]);
        assert!(
            status.lines().all(|l| l.ends_with(" big.txt")),
            "round {round}: git status shows more than big.txt:\n{status}"
        );
        // Back to the old file for the next round.
        std::fs::write(root.join("big.txt"), "old\n").unwrap();
    }
    assert!(killed_mid_write > 0, "the server was never caught writing its temporary file");
    eprintln!("killed mid-write {killed_mid_write} of {KILLS} times");
}

/// A `.charly-*.tmp` left by a process killed between linking its temporary file in and
/// renaming it (or written by the fallback for file systems without `O_TMPFILE`) is not shown
/// by `box.cat` or resources, and the next edit of its directory removes it.
#[test]
fn stale_temporaries_are_refused_and_removed_by_the_next_edit() {
    let dir = tempfile::tempdir().unwrap();
    let project = charly_cli::project::write_sample(dir.path()).unwrap();
    let stale = dir.path().join("candy/hello-svc/.charly-4242-0.tmp");
    std::fs::write(&stale, "half an edit").unwrap();
    let root_stale = dir.path().join(".charly-4242-1.tmp");
    std::fs::write(&root_stale, "half an edit").unwrap();
    // A directory of that name is not charly's, and stays.
    std::fs::create_dir(dir.path().join("candy/.charly-dir.tmp")).unwrap();

    let err = project.cat(Path::new("candy/hello-svc/.charly-4242-0.tmp")).unwrap_err().to_string();
    assert!(err.contains("charly's temporary files"), "{err}");
    let err = project.write(Path::new(".charly-x.tmp"), "x").unwrap_err().to_string();
    assert!(err.contains("charly's temporary files"), "{err}");
    assert_eq!(project.list_candies().unwrap().candies, ["hello-svc"]);

    project.add_packages("hello-svc", charly_cli::project::PackageSection::Rpm, &["curl".into()]).unwrap();
    assert!(!stale.exists(), "the next edit of candy/hello-svc left the stale temporary file");
    assert!(root_stale.exists(), "an edit of another directory removed a file in the root");
    project.set("project.defaults.tag", "v2").unwrap();
    assert!(!root_stale.exists(), "the next edit of the root left the stale temporary file");
    assert!(dir.path().join("candy/.charly-dir.tmp").is_dir());

    // Over MCP: resources list only the project's files, and a stale file is never read.
    std::fs::write(dir.path().join("candy/hello-svc/.charly-4242-2.tmp"), "half").unwrap();
    let mut server = StdioServer::start(dir.path());
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "resources/list"}));
    let listed = server.response(1, Duration::from_secs(30)).to_string();
    assert!(!listed.contains(".charly-"), "{listed}");
    server.call(2, "box.cat", json!({"path": "candy/hello-svc/.charly-4242-2.tmp"}));
    let result = server.response(2, Duration::from_secs(30));
    assert_eq!(result["result"]["isError"], true, "{result}");
    assert!(text_of(&result["result"]).contains("charly's temporary files"), "{result}");
}
