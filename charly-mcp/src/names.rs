//! MCP tool names: `^[a-zA-Z0-9_.-]{1,64}$` (the form MCP clients accept; the derive checks
//! the same rule at compile time).

/// Longest tool name, in characters.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// Whether `name` matches `^[a-zA-Z0-9_.-]{1,64}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME_LEN).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// The `_`-joined spelling of a dotted tool name, for clients that reject dots
/// (`box.new.project` → `box_new_project`).
pub fn underscored(name: &str) -> String {
    name.replace('.', "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names() {
        for ok in ["a", "box.new.project", "candy.add-rpm", "A_b-9", &"x".repeat(64)] {
            assert!(is_valid_tool_name(ok), "{ok}");
        }
        for bad in ["", "a b", "é", "a/b", &"x".repeat(65)] {
            assert!(!is_valid_tool_name(bad), "{bad}");
        }
        assert_eq!(underscored("box.new.project"), "box_new_project");
    }
}
