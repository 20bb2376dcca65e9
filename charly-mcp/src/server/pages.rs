//! Pagination of list results with opaque cursors, computed once when the server is built.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::ErrorData as McpError;

/// The items of one list method, split into pages of a fixed size.
#[derive(Debug)]
pub(crate) struct Pages<T> {
    kind: &'static str,
    pages: Vec<Vec<T>>,
}

impl<T: Clone> Pages<T> {
    /// `kind` names the list in cursors and errors (`tools`, `resources`...). A page size of
    /// 0 means one page.
    pub(crate) fn new(kind: &'static str, items: Vec<T>, page_size: usize) -> Pages<T> {
        let page_size = if page_size == 0 { items.len().max(1) } else { page_size };
        let mut pages: Vec<Vec<T>> = items.chunks(page_size).map(<[T]>::to_vec).collect();
        if pages.is_empty() {
            pages.push(Vec::new());
        }
        Pages { kind, pages }
    }

    /// The page a cursor points at (the first page without one) and the cursor of the next
    /// page, `None` on the last page.
    ///
    /// # Errors
    ///
    /// An invalid-params error when the cursor was not issued by this server's list.
    pub(crate) fn page(&self, cursor: Option<&str>) -> Result<(Vec<T>, Option<String>), McpError> {
        let index = self.index(cursor).ok_or_else(|| {
            McpError::invalid_params(
                format!(
                    "invalid cursor {:?} for {}/list: pass back a nextCursor this server sent",
                    cursor.unwrap_or_default(),
                    self.kind
                ),
                None,
            )
        })?;
        let (items, next) = self.at(index);
        Ok((items.to_vec(), next))
    }

    /// The index of the page a cursor points at (0 without one); `None` for a cursor this
    /// list did not issue.
    pub(crate) fn index(&self, cursor: Option<&str>) -> Option<usize> {
        match cursor {
            None => Some(0),
            Some(cursor) => self.decode(cursor),
        }
    }

    /// How many pages there are (at least one).
    #[cfg(feature = "http")]
    pub(crate) fn len(&self) -> usize {
        self.pages.len()
    }

    /// Page `index` and the cursor of the next page, `None` on the last.
    pub(crate) fn at(&self, index: usize) -> (&[T], Option<String>) {
        let next = (index + 1 < self.pages.len()).then(|| self.encode(index + 1));
        (&self.pages[index], next)
    }

    fn encode(&self, index: usize) -> String {
        URL_SAFE_NO_PAD.encode(format!("charly:{}:{index}", self.kind))
    }

    fn decode(&self, cursor: &str) -> Option<usize> {
        let raw = String::from_utf8(URL_SAFE_NO_PAD.decode(cursor).ok()?).ok()?;
        let index = raw.strip_prefix("charly:")?.strip_prefix(self.kind)?.strip_prefix(':')?;
        let index: usize = index.parse().ok()?;
        // Only the spelling this list issues (`01` or `+1` parse too).
        (index > 0 && index < self.pages.len() && self.encode(index) == cursor).then_some(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_all_pages() {
        let pages = Pages::new("tools", (0..7).collect(), 3);
        let (first, next) = pages.page(None).unwrap();
        assert_eq!(first, [0, 1, 2]);
        let (second, next) = pages.page(next.as_deref()).unwrap();
        assert_eq!(second, [3, 4, 5]);
        let (last, next) = pages.page(next.as_deref()).unwrap();
        assert_eq!((last, next), (vec![6], None));
    }

    #[test]
    fn rejects_foreign_cursors() {
        let pages = Pages::new("tools", (0..7).collect(), 3);
        let prompts = Pages::new("prompts", (0..7).collect(), 3);
        let (_, next) = prompts.page(None).unwrap();
        let not_issued = |raw: &str| URL_SAFE_NO_PAD.encode(raw);
        for bad in [
            "",
            "xyz",
            "Y2hhcmx5OnRvb2xzOjk",
            next.as_deref().unwrap(),
            &not_issued("charly:tools:01"),
            &not_issued("charly:tools:+1"),
        ] {
            assert!(pages.page(Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn empty_and_unpaged() {
        let empty: Pages<u8> = Pages::new("tools", vec![], 10);
        assert_eq!(empty.page(None).unwrap(), (vec![], None));
        let one = Pages::new("tools", vec![1, 2, 3], 0);
        assert_eq!(one.page(None).unwrap(), (vec![1, 2, 3], None));
    }
}
