//! What names charly accepts for nodes and packages.

use super::error::{ProjectError, Result};

/// Checks a box or candy name: 1 to 63 lowercase ASCII letters, digits, `-` and `_`, starting with
/// a letter. Names become directory names, image names and dot-path segments, so dots, slashes and
/// uppercase are out.
pub fn check_name(name: &str, what: &'static str) -> Result<()> {
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && name.len() <= 63
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if ok { Ok(()) } else { Err(ProjectError::InvalidName { name: name.to_owned(), what }) }
}

/// Checks a package name: it goes onto an install command line in the Containerfile, so only
/// characters package managers use in names and version constraints are allowed, and no leading
/// `-` (which would be read as an option).
pub fn check_package(package: &str) -> Result<()> {
    let ok = !package.is_empty()
        && !package.starts_with('-')
        && package.chars().all(|c| c.is_ascii_alphanumeric() || "._+-:@~=/".contains(c));
    if ok { Ok(()) } else { Err(ProjectError::InvalidPackage { package: package.to_owned() }) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for good in ["hello", "hello-svc", "a_1", "x"] {
            assert!(check_name(good, "box").is_ok(), "{good}");
        }
        for bad in ["", "Hello", "1abc", "-a", "a.b", "a/b", "a b", &"a".repeat(64)] {
            assert!(check_name(bad, "box").is_err(), "{bad}");
        }
    }

    #[test]
    fn packages() {
        for good in [
            "curl",
            "openssh-server",
            "python3.12",
            "gcc-c++",
            "perl(Foo)x".trim_end_matches("(Foo)x"),
            "lib:i386",
        ] {
            assert!(check_package(good).is_ok(), "{good}");
        }
        for bad in ["", "-y", "a b", "a;rm", "$(x)", "a'b", "a\nb"] {
            assert!(check_package(bad).is_err(), "{bad}");
        }
    }
}
