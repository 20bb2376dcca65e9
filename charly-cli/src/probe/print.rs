//! The text printers of the client methods: one record per line, tab-separated fields.
//!
//! Fields never contain a tab or a line break (they are replaced by a space), so every line
//! splits on `\t` into the documented columns. Binary content is never printed: images,
//! audio and blobs become placeholders that give the MIME type and the decoded size.

use std::io::{self, Write};

use base64::Engine as _;
use charly::server::rmcp::model::{CallToolResult, ContentBlock, Prompt, Resource, ResourceContents, Tool};

/// `name\tfirst line of description` per tool.
///
/// # Errors
///
/// Write errors.
pub fn write_tools(out: &mut dyn Write, tools: &[Tool]) -> io::Result<()> {
    for tool in tools {
        let description = tool.description.as_deref().unwrap_or("");
        writeln!(out, "{}\t{}", field(&tool.name), field(first_line(description)))?;
    }
    Ok(())
}

/// `uri\tname\tmime` per resource (an unknown MIME type is an empty field).
///
/// # Errors
///
/// Write errors.
pub fn write_resources(out: &mut dyn Write, resources: &[Resource]) -> io::Result<()> {
    for r in resources {
        writeln!(
            out,
            "{}\t{}\t{}",
            field(&r.uri),
            field(&r.name),
            field(r.mime_type.as_deref().unwrap_or(""))
        )?;
    }
    Ok(())
}

/// `name\tdescription` per prompt (line breaks in the description become spaces).
///
/// # Errors
///
/// Write errors.
pub fn write_prompts(out: &mut dyn Write, prompts: &[Prompt]) -> io::Result<()> {
    for p in prompts {
        writeln!(out, "{}\t{}", field(&p.name), field(p.description.as_deref().unwrap_or("")))?;
    }
    Ok(())
}

/// A `tools/call` result: each content block on its own line(s).
///
/// Text is printed as is (a final newline added when missing); images and audio become
/// `[image content: <mime>, <N> bytes]` / `[audio content: <mime>, <N> bytes]`; embedded
/// resources print their text or a `[binary resource: <uri>, <mime>, <N> bytes]` placeholder;
/// resource links print `[resource link: <uri>]`. With no content but `structuredContent`,
/// that JSON is printed on one line.
///
/// # Errors
///
/// Write errors.
pub fn write_call_result(out: &mut dyn Write, result: &CallToolResult) -> io::Result<()> {
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => write_text(out, &t.text)?,
            ContentBlock::Image(i) => {
                writeln!(out, "[image content: {}, {} bytes]", field(&i.mime_type), decoded_len(&i.data))?
            }
            ContentBlock::Audio(a) => {
                writeln!(out, "[audio content: {}, {} bytes]", field(&a.mime_type), decoded_len(&a.data))?
            }
            ContentBlock::Resource(r) => write_resource_contents(out, &r.resource)?,
            ContentBlock::ResourceLink(link) => writeln!(out, "[resource link: {}]", field(&link.uri))?,
            other => writeln!(out, "{}", serde_json::to_string(other).unwrap_or_default())?,
        }
    }
    if result.content.is_empty()
        && let Some(structured) = &result.structured_content
    {
        writeln!(out, "{structured}")?;
    }
    Ok(())
}

/// The contents of a `resources/read` result: text contents as is, blobs as
/// `[binary resource: <uri>, <mime>, <N> bytes]`.
///
/// # Errors
///
/// Write errors.
pub fn write_contents(out: &mut dyn Write, contents: &[ResourceContents]) -> io::Result<()> {
    for contents in contents {
        write_resource_contents(out, contents)?;
    }
    Ok(())
}

fn write_resource_contents(out: &mut dyn Write, contents: &ResourceContents) -> io::Result<()> {
    match contents {
        ResourceContents::TextResourceContents { text, .. } => write_text(out, text),
        ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => writeln!(
            out,
            "[binary resource: {}, {}, {} bytes]",
            field(uri),
            field(mime_type.as_deref().unwrap_or("application/octet-stream")),
            decoded_len(blob)
        ),
        #[allow(unreachable_patterns)]
        other => writeln!(out, "{}", serde_json::to_string(other).unwrap_or_default()),
    }
}

fn write_text(out: &mut dyn Write, text: &str) -> io::Result<()> {
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// The size of base64 `data` once decoded; for undecodable data, an estimate from its length.
fn decoded_len(data: &str) -> usize {
    let trimmed: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(&trimmed)
        .map(|bytes| bytes.len())
        .unwrap_or(trimmed.len() / 4 * 3)
}

fn first_line(text: &str) -> &str {
    text.trim_start().lines().next().unwrap_or("").trim_end()
}

/// A field with tabs and line breaks replaced by spaces.
pub(crate) fn field(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains(['\t', '\n', '\r']) {
        text.replace("\r\n", " ").replace(['\t', '\n', '\r'], " ").into()
    } else {
        text.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_first_lines() {
        assert_eq!(first_line("  Echo back\nmore text"), "Echo back");
        assert_eq!(first_line(""), "");
        assert_eq!(field("a\tb\nc\r\nd"), "a b c d");
        assert_eq!(decoded_len("aGVsbG8="), 5);
    }

    #[test]
    fn call_result_placeholders() {
        let result = CallToolResult::success(vec![
            ContentBlock::text("one"),
            ContentBlock::image("aGVsbG8=", "image/png"),
            ContentBlock::audio("aGk=", "audio/wav"),
            ContentBlock::resource(ResourceContents::BlobResourceContents {
                uri: "test://b".into(),
                mime_type: None,
                blob: "aGVsbG8=".into(),
                meta: None,
            }),
        ]);
        let mut out = Vec::new();
        write_call_result(&mut out, &result).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "one\n[image content: image/png, 5 bytes]\n[audio content: audio/wav, 2 bytes]\n\
             [binary resource: test://b, application/octet-stream, 5 bytes]\n"
        );
    }
}
