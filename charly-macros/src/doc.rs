//! Doc comments read the way clap_derive reads them (clap_derive `utils/doc_comments.rs`):
//! the first paragraph, its trailing period removed, is the short text (`about`, `help`); the
//! whole comment, paragraphs joined by a blank line, is the long text when there are several
//! paragraphs. `verbatim_doc_comment` keeps the lines as written.

use syn::{Attribute, Expr, ExprLit, Lit, Meta, MetaNameValue};

/// Short and long text of a doc comment; both `None` without one.
pub(crate) fn doc_text(attrs: &[Attribute], verbatim: bool) -> (Option<String>, Option<String>) {
    let lines = extract(attrs);
    if lines.is_empty() {
        return (None, None);
    }
    if verbatim {
        return match lines.iter().position(|s| is_blank(s)) {
            Some(first_blank) => (Some(lines[..first_blank].join("\n")), Some(lines.join("\n"))),
            None => (Some(lines.join("\n")), None),
        };
    }
    if lines.iter().any(|s| is_blank(s)) {
        let paragraphs = paragraphs(&lines);
        (Some(remove_period(paragraphs[0].clone())), Some(paragraphs.join("\n\n")))
    } else {
        (Some(remove_period(merge(&lines))), None)
    }
}

fn extract(attrs: &[Attribute]) -> Vec<String> {
    let mut lines: Vec<String> = attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(MetaNameValue { value: Expr::Lit(ExprLit { lit: Lit::Str(s), .. }), .. }) => {
                Some(s.value())
            }
            _ => None,
        })
        .skip_while(|s| is_blank(s))
        .flat_map(|s| s.split('\n').map(|l| l.strip_prefix(' ').unwrap_or(l).to_owned()).collect::<Vec<_>>())
        .collect();
    while lines.last().is_some_and(|s| is_blank(s)) {
        lines.pop();
    }
    lines
}

fn paragraphs(lines: &[String]) -> Vec<String> {
    lines.split(|s| is_blank(s)).filter(|p| !p.is_empty()).map(merge).collect()
}

fn merge(lines: &[String]) -> String {
    lines.iter().map(|s| s.trim()).collect::<Vec<_>>().join(" ")
}

fn remove_period(mut s: String) -> String {
    if s.ends_with('.') && !s.ends_with("..") {
        s.pop();
    }
    s
}

fn is_blank(s: &str) -> bool {
    s.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(src: &str) -> Vec<Attribute> {
        let item: syn::ItemStruct = syn::parse_str(&format!("{src}\nstruct S;")).unwrap();
        item.attrs
    }

    #[test]
    fn paragraphs_like_clap() {
        let (short, long) = doc_text(&attrs("/// Add packages.\n/// To a candy."), false);
        assert_eq!(short.as_deref(), Some("Add packages. To a candy"));
        assert_eq!(long, None);
        let (short, long) = doc_text(&attrs("/// Add packages.\n///\n/// Long text\n/// here."), false);
        assert_eq!(short.as_deref(), Some("Add packages"));
        assert_eq!(long.as_deref(), Some("Add packages.\n\nLong text here."));
        let (short, long) = doc_text(&attrs("/// Etc..\n///\n///   keep"), true);
        assert_eq!(short.as_deref(), Some("Etc.."));
        assert_eq!(long.as_deref(), Some("Etc..\n\n  keep"));
        assert_eq!(doc_text(&attrs("#[derive(Debug)]"), false), (None, None));
    }
}
