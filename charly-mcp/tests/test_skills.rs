//! Skills (the skills extension, SEP-2640) end to end: a charly server on 127.0.0.1 serves
//! skills built in memory and from a folder; charly's client lists them (reading nothing),
//! loads them with every file checked against the entry, and refuses a skill whose files do
//! not match it, on protocol 2026-07-28 and on 2025-11-25.

mod common;

use charly_mcp::client::{ClientError, ConnectOptions, Endpoint, Protocol, TransportKind, connect};
use charly_mcp::server::rmcp::model::SkillResources;
use charly_mcp::server::{Server, ServerOptions, Skill};
use common::http::loopback;

const NOTES: &str = "---\nname: release-notes\ndescription: Write release notes\nmetadata:\n  audience: maintainers\n---\n\nSteps.\n";
const FORMS: &str = "---\nname: pdf-forms\ndescription: Fill PDF forms\n---\n\nSee references/FIELDS.md.\n";
/// Not UTF-8: served as a base64 blob.
const LOGO: &[u8] = &[0x89, b'P', b'N', b'G', 0xff, 0x00, 0x01];

fn skills_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("charly-test-skills-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("references")).unwrap();
    std::fs::write(dir.join("SKILL.md"), FORMS).unwrap();
    std::fs::write(dir.join("references/FIELDS.md"), "text, checkbox\n").unwrap();
    dir
}

async fn client_of(url: &str, protocol: Protocol) -> charly_mcp::client::Client {
    let endpoint = Endpoint::url(url, TransportKind::StreamableHttp).unwrap();
    connect(&endpoint, &ConnectOptions { protocol, ..Default::default() }).await.unwrap()
}

#[tokio::test]
async fn skills_are_listed_then_loaded_with_every_file_checked() {
    let dir = skills_dir();
    let options = ServerOptions::new("skills", "0")
        .skill(Skill::new("release-notes").file("SKILL.md", NOTES).file("assets/logo.png", LOGO))
        .skill(Skill::from_dir("acme/pdf-forms", &dir).unwrap());
    let server = Server::new(options).serve_http(loopback()).await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    for protocol in [Protocol::Latest, Protocol::Initialize] {
        let client = client_of(&server.url(), protocol).await;
        assert!(client.supports_skills(), "{protocol:?}");
        let skills = client.list_skills().await.unwrap();
        let uris: Vec<&str> = skills.iter().map(|s| s.uri.as_str()).collect();
        assert_eq!(
            uris,
            ["skill://acme/pdf-forms/SKILL.md", "skill://release-notes/SKILL.md"],
            "{protocol:?}"
        );
        assert_eq!(skills[1].frontmatter.extra["metadata"]["audience"], "maintainers");

        let notes = client.get_skill("skill://release-notes/SKILL.md").await.unwrap();
        assert_eq!(notes, skills[1]);
        let loaded = client.load_skill(&notes).await.unwrap();
        let files: Vec<(&str, &[u8])> = loaded.files.iter().map(|f| (f.uri.as_str(), &f.bytes[..])).collect();
        assert_eq!(
            files,
            [
                ("skill://release-notes/SKILL.md", NOTES.as_bytes()),
                ("skill://release-notes/assets/logo.png", LOGO)
            ]
        );
        assert_eq!(loaded.files[0].mime_type.as_deref(), Some("text/markdown"));
        let forms = client.load_skill(&skills[0]).await.unwrap();
        assert_eq!(forms.files[1].bytes, b"text, checkbox\n");

        // Each SKILL.md is a resource too, named and described from its frontmatter.
        let resources = client.list_resources().await.unwrap();
        let manifest = resources.iter().find(|r| r.uri == "skill://acme/pdf-forms/SKILL.md").unwrap();
        assert_eq!(
            (manifest.name.as_str(), manifest.description.as_deref()),
            ("pdf-forms", Some("Fill PDF forms"))
        );

        match client.get_skill("skill://nothing-here/SKILL.md").await {
            Err(ClientError::Server { code: -32602, message, .. }) => {
                assert!(message.contains("nothing-here"), "{message}")
            }
            other => panic!("an unknown skill: {other:?}"),
        }
        client.close().await;
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_skill_whose_files_do_not_match_its_entry_is_not_used() {
    let options = ServerOptions::new("skills", "0").skill(
        Skill::new("pdf-forms").file("SKILL.md", FORMS).file("references/FIELDS.md", "text, checkbox\n"),
    );
    let server = Server::new(options).serve_http(loopback()).await.unwrap();
    let client = client_of(&server.url(), Protocol::Latest).await;
    let entry = client.list_skills().await.unwrap().remove(0);
    let refused = |entry| {
        let client = &client;
        async move {
            match client.load_skill(&entry).await {
                Err(ClientError::Skill { uri, message }) => format!("{uri}: {message}"),
                other => panic!("a mismatched skill was loaded: {other:?}"),
            }
        }
    };

    let mut wrong_size = entry.clone();
    let SkillResources::Files(files) = &mut wrong_size.resources else { panic!("a file manifest") };
    files[0].size += 1;
    let text = refused(wrong_size).await;
    assert!(text.starts_with("skill://pdf-forms/SKILL.md: "), "{text}");
    assert!(text.contains("bytes where the skill's entry says"), "{text}");

    let mut wrong_digest = entry.clone();
    let SkillResources::Files(files) = &mut wrong_digest.resources else { panic!("a file manifest") };
    files[1].digest = format!("sha256:{}", "0".repeat(64));
    let text = refused(wrong_digest).await;
    assert!(text.starts_with("skill://pdf-forms/references/FIELDS.md: digest sha256:"), "{text}");

    let mut wrong_frontmatter = entry.clone();
    wrong_frontmatter.frontmatter.description = "Something else".into();
    let text = refused(wrong_frontmatter).await;
    assert!(text.contains("`description` is \"Fill PDF forms\" in the file"), "{text}");

    assert_eq!(client.load_skill(&entry).await.unwrap().files.len(), 2, "the entry as listed loads");
    client.close().await;
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_server_without_skills_does_not_declare_the_extension() {
    let server = Server::new(ServerOptions::new("plain", "0")).serve_http(loopback()).await.unwrap();
    let client = client_of(&server.url(), Protocol::Latest).await;
    assert!(!client.supports_skills());
    let error = client.list_skills().await.unwrap_err().to_string();
    assert!(error.contains("does not declare the skills extension"), "{error}");
    client.close().await;
    server.shutdown().await.unwrap();
}
