//! Resources: fixed URIs ([`Resource`]), a set listed afresh on every call ([`ResourceList`])
//! and URI templates ([`ResourceTemplate`]).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use base64::Engine as _;
use rmcp::ErrorData as McpError;
use rmcp::model::ResourceContents;

/// The future a resource read returns.
pub type ReadFuture = Pin<Box<dyn Future<Output = Result<Vec<ResourceContents>, McpError>> + Send + 'static>>;

type ReadFn = Arc<dyn Fn(String) -> ReadFuture + Send + Sync>;
type TemplateFn = Arc<dyn Fn(String, HashMap<String, String>) -> ReadFuture + Send + Sync>;
type CompleteFn = Arc<dyn Fn(&str, &str) -> Vec<String> + Send + Sync>;

/// A resource at a fixed URI (`resources/list`, `resources/read`).
#[derive(Clone)]
pub struct Resource {
    pub(crate) model: rmcp::model::Resource,
    pub(crate) read: ReadFn,
}

impl Resource {
    /// A resource whose contents come from `read(uri)`, listed as `model` (URI, name, MIME
    /// type, description...).
    pub fn new<F, Fut>(model: rmcp::model::Resource, read: F) -> Resource
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, McpError>> + Send + 'static,
    {
        Resource { model, read: Arc::new(move |uri| Box::pin(read(uri))) }
    }

    /// A fixed text resource.
    pub fn text(uri: &str, name: &str, mime_type: &str, text: impl Into<String>) -> Resource {
        let text: Arc<str> = text.into().into();
        let mime = mime_type.to_owned();
        let model = rmcp::model::Resource::new(uri, name).with_mime_type(mime_type);
        Resource::new(model, move |uri| {
            let contents = ResourceContents::text(&*text, uri).with_mime_type(mime.clone());
            async move { Ok(vec![contents]) }
        })
    }

    /// A fixed binary resource, served base64-encoded as a `blob`.
    pub fn blob(uri: &str, name: &str, mime_type: &str, bytes: &[u8]) -> Resource {
        let blob: Arc<str> = base64::engine::general_purpose::STANDARD.encode(bytes).into();
        let mime = mime_type.to_owned();
        let model =
            rmcp::model::Resource::new(uri, name).with_mime_type(mime_type).with_size(bytes.len() as u64);
        Resource::new(model, move |uri| {
            let contents = ResourceContents::blob(&*blob, uri).with_mime_type(mime.clone());
            async move { Ok(vec![contents]) }
        })
    }

    /// The URI.
    pub fn uri(&self) -> &str {
        &self.model.uri
    }
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resource").field("uri", &self.model.uri).finish_non_exhaustive()
    }
}

/// Resources whose set changes while the server runs (the files of a directory): `list()`
/// gives them on every `resources/list`, after the fixed [`Resource`]s, and each is read by
/// its own `read`. `list()` runs on the blocking pool, so it may read the disk; it also runs
/// once when the server is built, for `resources/read` of a URI no fixed resource has, and
/// after every call of a tool that is not read-only, whose changes to the set the server then
/// announces with `notifications/resources/list_changed` (its capability declares
/// `listChanged`). A URI a fixed resource already has is left out of the list.
///
/// ```
/// use charly_mcp::server::{Resource, ResourceList, ServerOptions};
///
/// let notes = std::env::temp_dir().join("notes");
/// let files = ResourceList::new(move || {
///     let entries = std::fs::read_dir(&notes).into_iter().flatten().flatten();
///     entries
///         .filter_map(|entry| {
///             let name = entry.file_name().into_string().ok()?;
///             let path = entry.path();
///             let model = charly_mcp::server::rmcp::model::Resource::new(format!("notes://{name}"), &name);
///             Some(Resource::new(model, move |uri| {
///                 let text = std::fs::read_to_string(&path);
///                 async move {
///                     let text = text.map_err(|e| charly_mcp::server::rmcp::ErrorData::resource_not_found(e.to_string(), None))?;
///                     Ok(vec![charly_mcp::server::rmcp::model::ResourceContents::text(text, uri)])
///                 }
///             }))
///         })
///         .collect()
/// });
/// let options = ServerOptions::new("notes", "1.0.0").resource_list(files);
/// # let _ = options;
/// ```
#[derive(Clone)]
pub struct ResourceList {
    list: Arc<dyn Fn() -> Vec<Resource> + Send + Sync>,
}

impl ResourceList {
    /// The resources `list()` gives at each call.
    pub fn new<F>(list: F) -> ResourceList
    where
        F: Fn() -> Vec<Resource> + Send + Sync + 'static,
    {
        ResourceList { list: Arc::new(list) }
    }

    /// The resources now, listed on the calling thread.
    pub(crate) fn now(&self) -> Vec<Resource> {
        (self.list)()
    }

    /// The resources now, listed on the blocking pool.
    pub(crate) async fn listed(&self) -> Vec<Resource> {
        let list = self.list.clone();
        tokio::task::spawn_blocking(move || list()).await.unwrap_or_default()
    }
}

impl fmt::Debug for ResourceList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceList").finish_non_exhaustive()
    }
}

/// A family of resources behind an RFC 6570 level-1 URI template (`test://items/{id}`):
/// `resources/templates/list` lists it, `resources/read` of a matching URI calls `read`
/// with the variables, and `completion/complete` on a `ref/resource` asks the completer.
#[derive(Clone)]
pub struct ResourceTemplate {
    pub(crate) model: rmcp::model::ResourceTemplate,
    pub(crate) read: TemplateFn,
    pub(crate) complete: Option<CompleteFn>,
    segments: Arc<[Segment]>,
}

#[derive(Debug, PartialEq)]
enum Segment {
    Literal(String),
    Var(String),
}

impl ResourceTemplate {
    /// A template listed as `model` (its `uriTemplate`, name, MIME type...), read by
    /// `read(uri, variables)`.
    ///
    /// # Panics
    ///
    /// When the template has an unclosed `{`, an empty variable, or two variables in a row
    /// (which no URI could be split between).
    #[track_caller]
    pub fn new<F, Fut>(model: rmcp::model::ResourceTemplate, read: F) -> ResourceTemplate
    where
        F: Fn(String, HashMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, McpError>> + Send + 'static,
    {
        let segments = parse_template(&model.uri_template).unwrap_or_else(|e| {
            panic!("charly: resource template `{}`: {e}", model.uri_template);
        });
        ResourceTemplate {
            model,
            read: Arc::new(move |uri, vars| Box::pin(read(uri, vars))),
            complete: None,
            segments: segments.into(),
        }
    }

    /// Completes a variable: `complete(variable, typed_so_far)` returns candidate values.
    pub fn with_completion<F>(mut self, complete: F) -> ResourceTemplate
    where
        F: Fn(&str, &str) -> Vec<String> + Send + Sync + 'static,
    {
        self.complete = Some(Arc::new(complete));
        self
    }

    /// The URI template.
    pub fn uri_template(&self) -> &str {
        &self.model.uri_template
    }

    /// The variables of `uri` if it matches this template. A variable matches one or more
    /// characters other than `/`.
    pub fn matches(&self, uri: &str) -> Option<HashMap<String, String>> {
        let mut vars = HashMap::new();
        let mut rest = uri;
        let mut segments = self.segments.iter().peekable();
        while let Some(segment) = segments.next() {
            match segment {
                Segment::Literal(lit) => rest = rest.strip_prefix(lit.as_str())?,
                Segment::Var(name) => {
                    let end = match segments.peek() {
                        Some(Segment::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    let value = &rest[..end];
                    if value.is_empty() || value.contains('/') {
                        return None;
                    }
                    vars.insert(name.clone(), value.to_owned());
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(vars)
    }
}

impl fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceTemplate")
            .field("uri_template", &self.model.uri_template)
            .finish_non_exhaustive()
    }
}

fn parse_template(template: &str) -> Result<Vec<Segment>, String> {
    let mut segments = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            segments.push(Segment::Literal(rest[..open].to_owned()));
        } else if matches!(segments.last(), Some(Segment::Var(_))) {
            return Err("two variables in a row cannot be told apart; put a literal between them".into());
        }
        let close = rest[open..].find('}').ok_or("a `{` is never closed")? + open;
        let name = &rest[open + 1..close];
        if name.is_empty() {
            return Err("a variable has no name (`{}`)".into());
        }
        segments.push(Segment::Var(name.to_owned()));
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        segments.push(Segment::Literal(rest.to_owned()));
    }
    Ok(segments)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(t: &str) -> ResourceTemplate {
        ResourceTemplate::new(rmcp::model::ResourceTemplate::new(t, "t"), |_, _| async { Ok(vec![]) })
    }

    #[test]
    fn template_matching() {
        let t = template("test://template/{id}/data");
        let vars = t.matches("test://template/123/data").unwrap();
        assert_eq!(vars["id"], "123");
        assert!(t.matches("test://template//data").is_none());
        assert!(t.matches("test://template/1/2/data").is_none());
        assert!(t.matches("test://template/123/data/x").is_none());
        let t = template("file:///{dir}/{name}");
        let vars = t.matches("file:///etc/hosts").unwrap();
        assert_eq!((vars["dir"].as_str(), vars["name"].as_str()), ("etc", "hosts"));
    }

    #[test]
    fn bad_templates() {
        assert!(parse_template("a{b").is_err());
        assert!(parse_template("a{}").is_err());
        assert!(parse_template("{a}{b}").is_err());
    }
}
