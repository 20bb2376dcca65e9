//! `list-skills` and `read-skill`: the skills extension (SEP-2640) of a server, listed without
//! reading any file, and one skill loaded with every file checked against its entry.

use std::fmt;

use charly::client::{ClientError, ConnectOptions, Endpoint, LoadedSkill, connect};
use charly::server::rmcp::model::Skill;
use schemars::JsonSchema;
use serde::Serialize;

use super::print::field;
use crate::report::Report;

/// `list-skills`: every page of `skills/list`, each entry whole (`uri`, `frontmatter`,
/// `resources` with each file's `digest` and `size`).
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct SkillList {
    /// The entries, as the server sent them.
    #[schemars(with = "Vec<serde_json::Map<String, serde_json::Value>>")]
    pub skills: Vec<Skill>,
}

impl fmt::Display for SkillList {
    /// `uri<TAB>name<TAB>description` per skill.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for skill in &self.skills {
            let front = &skill.frontmatter;
            writeln!(f, "{}\t{}\t{}", field(&skill.uri), field(&front.name), field(&front.description))?;
        }
        Ok(())
    }
}

impl Report for SkillList {}

/// One file of [`SkillFiles`].
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillFileEntry {
    /// The file's URI.
    pub uri: String,
    /// Its MIME type, when the server sent one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes (checked, with its SHA-256 digest, against the skill's entry).
    pub size: u64,
    /// Its text, when it is UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// `read-skill --uri U`: the skill's files, `SKILL.md` first, each one checked against the
/// skill's entry (size, digest; the `SKILL.md` frontmatter field by field) before it is shown.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct SkillFiles {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The files.
    pub files: Vec<SkillFileEntry>,
}

impl From<LoadedSkill> for SkillFiles {
    fn from(loaded: LoadedSkill) -> Self {
        let files = loaded
            .files
            .into_iter()
            .map(|file| SkillFileEntry {
                size: file.bytes.len() as u64,
                text: String::from_utf8(file.bytes).ok(),
                uri: file.uri,
                mime_type: file.mime_type,
            })
            .collect();
        SkillFiles { uri: loaded.entry.uri, files }
    }
}

impl fmt::Display for SkillFiles {
    /// The `SKILL.md` text as it is, then each other file under a `==> <uri> <==` line (its
    /// text, or `[binary skill file: <uri>, <mime>, <N> bytes]`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, file) in self.files.iter().enumerate() {
            if index > 0 {
                writeln!(f, "==> {} <==", file.uri)?;
            }
            match &file.text {
                Some(text) => {
                    f.write_str(text)?;
                    if !text.ends_with('\n') {
                        f.write_str("\n")?;
                    }
                }
                None => writeln!(
                    f,
                    "[binary skill file: {}, {}, {} bytes]",
                    file.uri,
                    file.mime_type.as_deref().unwrap_or("no type"),
                    file.size
                )?,
            }
        }
        Ok(())
    }
}

impl Report for SkillFiles {}

/// `list-skills`: every page.
///
/// # Errors
///
/// As [`super::ping`]; a server without the skills extension is an error saying so.
pub async fn list_skills(endpoint: &Endpoint, options: &ConnectOptions) -> Result<SkillList, ClientError> {
    let client = connect(endpoint, options).await?;
    let result = client.list_skills().await;
    client.close().await;
    Ok(SkillList { skills: result? })
}

/// `read-skill --uri U`: `skills/get` of `uri` (the skill's `SKILL.md`), then its files, each
/// checked against the entry; a file that fails the check stops the read.
///
/// # Errors
///
/// As [`list_skills`]; [`ClientError::Skill`] naming the file that does not match its entry.
pub async fn read_skill(
    endpoint: &Endpoint,
    uri: &str,
    options: &ConnectOptions,
) -> Result<SkillFiles, ClientError> {
    let client = connect(endpoint, options).await?;
    let result = async {
        let entry = client.get_skill(uri).await?;
        client.load_skill(&entry).await
    }
    .await;
    client.close().await;
    Ok(result?.into())
}

/// [`read_skill`] on an open session.
pub(super) async fn read_skill_on(
    client: &charly::client::Client,
    uri: &str,
) -> Result<SkillFiles, ClientError> {
    let entry = client.get_skill(uri).await?;
    Ok(client.load_skill(&entry).await?.into())
}
