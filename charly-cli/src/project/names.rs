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

/// Checks an alias name: a plain file name of letters, digits and `._+-`, not starting with
/// `.` or `-`.
///
/// # Errors
///
/// The message naming the problem.
pub fn check_alias_name(name: &str) -> std::result::Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with(['.', '-'])
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid alias name {name:?}: use letters, digits and `._+-` (no `/`, spaces or shell characters), \
             not starting with `.` or `-`"
        ))
    }
}

/// Checks a command: one line, not empty.
///
/// # Errors
///
/// The message naming the problem.
pub fn check_alias_command(command: &str) -> std::result::Result<(), String> {
    if command.trim().is_empty() || command.contains(['\n', '\r', '\0']) {
        Err(format!("invalid alias command {command:?}: give one non-empty line"))
    } else {
        Ok(())
    }
}

/// Checks a `KEY=VALUE` line.
///
/// # Errors
///
/// What is wrong with it.
pub fn check_env(line: &str) -> std::result::Result<(), String> {
    let Some((key, _)) = line.split_once('=') else {
        return Err(format!("{line:?} has no `=`; write KEY=VALUE (KEY= for an empty value)"));
    };
    let valid = !key.is_empty()
        && !key.starts_with(|c: char| c.is_ascii_digit())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(())
    } else {
        Err(format!("{key:?} is not a variable name (letters, digits and `_`, not starting with a digit)"))
    }
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
