//! Skills on the client side (the skills extension, SEP-2640): [`Client::list_skills`],
//! [`Client::get_skill`] and [`Client::load_skill`], which reads a skill's files only when
//! asked and uses none that fails its manifest's checks.

use base64::Engine as _;
use rmcp::model::{
    ClientRequest, GetSkillRequestParams, ListSkillsRequest, ResourceContents, SKILL_MD, ServerResult, Skill,
    SkillIntegrityError, SkillResource, SkillResources,
};
use serde_json::Value;

use super::error::ClientError;
use super::session::Client;

/// One file of a loaded skill, verified against the skill's manifest.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SkillFile {
    /// The file's URI (`skill://<skill-path>/<file>`).
    pub uri: String,
    /// Its MIME type, when the server sent one.
    pub mime_type: Option<String>,
    /// Its bytes (a `text` content's UTF-8 bytes, or a `blob` decoded).
    pub bytes: Vec<u8>,
}

/// A skill [`Client::load_skill`] read: its entry and its files, `SKILL.md` first, each one
/// checked against the entry's size and digest (`"resources": "dynamic"` entries have none to
/// check: only their `SKILL.md` is read).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct LoadedSkill {
    /// The entry from `skills/list` or `skills/get` that the files were checked against.
    pub entry: Skill,
    /// The files, `SKILL.md` first.
    pub files: Vec<SkillFile>,
}

impl Client {
    /// Whether the server declared the skills extension (`io.modelcontextprotocol/skills`).
    pub fn supports_skills(&self) -> bool {
        self.service.peer().peer_info().is_some_and(|info| info.capabilities.supports_skills())
    }

    fn require_skills(&self, operation: &'static str) -> Result<(), ClientError> {
        if self.supports_skills() {
            return Ok(());
        }
        Err(ClientError::Session {
            operation,
            message: "the server does not declare the skills extension (io.modelcontextprotocol/skills)"
                .into(),
        })
    }

    /// `skills/list`, every page. Lists entries only: no skill file is read.
    ///
    /// # Errors
    ///
    /// [`ClientError::Session`] when the server does not declare the skills extension (nothing
    /// is sent); otherwise as [`Client::list_tools`].
    pub async fn list_skills(&self) -> Result<Vec<Skill>, ClientError> {
        self.require_skills("skills/list")?;
        self.paginate(
            "skills/list",
            |p| ClientRequest::ListSkillsRequest(ListSkillsRequest { params: p, ..Default::default() }),
            |r| match r {
                ServerResult::ListSkillsResult(r) => Some((r.skills, r.next_cursor)),
                _ => None,
            },
        )
        .await
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is at `uri`.
    ///
    /// # Errors
    ///
    /// As [`Client::list_skills`]; an unknown skill is a [`ClientError::Server`] error -32602.
    pub async fn get_skill(&self, uri: &str) -> Result<Skill, ClientError> {
        self.require_skills("skills/get")?;
        let params = GetSkillRequestParams::new(uri);
        Ok(self.within("skills/get", self.service.peer().get_skill(params)).await?.skill)
    }

    /// Loads the skill `entry` describes (an entry from [`Client::list_skills`] or
    /// [`Client::get_skill`]): reads its `SKILL.md`, checks its size and digest against the
    /// entry and its YAML frontmatter against the entry's `frontmatter`, field by field, and
    /// only then reads the other files the entry lists, checking each. Nothing is read before
    /// this call, and nothing after a failed check.
    ///
    /// # Errors
    ///
    /// [`ClientError::Skill`] naming the file and what did not match (size, digest,
    /// frontmatter field, or a `SKILL.md` without frontmatter); errors of `resources/read`.
    pub async fn load_skill(&self, entry: &Skill) -> Result<LoadedSkill, ClientError> {
        let listed = match &entry.resources {
            SkillResources::Files(files) => Some(files.as_slice()),
            _ => None,
        };
        let manifest_entry = listed.and_then(|files| files.iter().find(|f| f.uri == entry.uri));
        if listed.is_some() && manifest_entry.is_none() {
            return Err(skill_error(&entry.uri, format!("the entry's resources do not list its {SKILL_MD}")));
        }
        let manifest = self.read_skill_file(&entry.uri, manifest_entry).await?;
        check_frontmatter(entry, &manifest.bytes)?;
        let mut files = vec![manifest];
        for file in listed.into_iter().flatten().filter(|f| f.uri != entry.uri) {
            files.push(self.read_skill_file(&file.uri, Some(file)).await?);
        }
        Ok(LoadedSkill { entry: entry.clone(), files })
    }

    /// `resources/read` of one skill file, checked against `listed` when there is one. A
    /// `file:` URI is refused unread: a skill's files are the server's resources, and a URI
    /// naming a file on a disk is not something a client should fetch on a server's word.
    async fn read_skill_file(
        &self,
        uri: &str,
        listed: Option<&SkillResource>,
    ) -> Result<SkillFile, ClientError> {
        if uri.get(..5).is_some_and(|scheme| scheme.eq_ignore_ascii_case("file:")) {
            return Err(skill_error(
                uri,
                "a skill file with a file: URI, which charly does not read (a skill's files are \
                 the server's skill:// resources); not used"
                    .into(),
            ));
        }
        let result = self.read_resource(uri).await?;
        let contents = result
            .contents
            .into_iter()
            .next()
            .ok_or_else(|| skill_error(uri, "resources/read returned no contents".into()))?;
        let (bytes, mime_type) = match contents {
            ResourceContents::TextResourceContents { text, mime_type, .. } => (text.into_bytes(), mime_type),
            ResourceContents::BlobResourceContents { blob, mime_type, .. } => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(blob.as_bytes())
                    .map_err(|e| skill_error(uri, format!("the blob is not base64: {e}")))?;
                (bytes, mime_type)
            }
            _ => return Err(skill_error(uri, "resources/read returned an unknown kind of contents".into())),
        };
        if let Some(listed) = listed {
            // Size first (no hashing of a file of the wrong length), then the digest.
            listed.verify(&bytes).map_err(|e| {
                let what = match e {
                    SkillIntegrityError::Size { expected, actual, .. } => {
                        format!("{actual} bytes where the skill's entry says {expected}")
                    }
                    SkillIntegrityError::Digest { expected, actual, .. } => {
                        format!("digest {actual} where the skill's entry says {expected}")
                    }
                    other => other.to_string(),
                };
                skill_error(uri, format!("{what}; not used"))
            })?;
        }
        Ok(SkillFile { uri: uri.to_owned(), mime_type, bytes })
    }
}

/// The `SKILL.md`'s frontmatter equals the entry's, key by key (YAML parsed to JSON values).
fn check_frontmatter(entry: &Skill, manifest: &[u8]) -> Result<(), ClientError> {
    let file = crate::skill_md::frontmatter(manifest)
        .map_err(|e| skill_error(&entry.uri, format!("{e}; not used")))?;
    let listed = match serde_json::to_value(&entry.frontmatter) {
        Ok(Value::Object(listed)) => listed,
        _ => return Err(skill_error(&entry.uri, "the entry's frontmatter is not an object".into())),
    };
    let mut keys: Vec<&String> = file.keys().chain(listed.keys()).collect();
    keys.sort();
    keys.dedup();
    let differ: Vec<String> = keys
        .into_iter()
        .filter(|k| file.get(*k) != listed.get(*k))
        .map(|k| {
            let show = |v: Option<&Value>| v.map_or_else(|| "absent".to_owned(), Value::to_string);
            format!("`{k}` is {} in the file but {} in the entry", show(file.get(k)), show(listed.get(k)))
        })
        .collect();
    if differ.is_empty() {
        return Ok(());
    }
    Err(skill_error(
        &entry.uri,
        format!("its frontmatter differs from the skill's entry ({}); not used", differ.join("; ")),
    ))
}

fn skill_error(uri: &str, message: String) -> ClientError {
    ClientError::Skill { uri: uri.to_owned(), message }
}
