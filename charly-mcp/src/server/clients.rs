//! The MCP clients known to reject dotted tool names, by the `clientInfo.name` they send: the
//! one table [`ToolNameStyle::Auto`](super::ToolNameStyle::Auto) reads.
//!
//! MCP 2025-11-25 ("Tool names") allows `.` in tool names, but these clients validate every
//! name against `^[a-zA-Z0-9_-]{1,64}$` (or `{1,128}`, the Claude and OpenAI APIs' pattern) and
//! then withhold the *whole* tool list, or fail every prompt, when one name fails. Each entry
//! names the public evidence it rests on: where the client's `clientInfo.name` was seen on
//! the wire, and where a dotted name was seen refused. A client enters the table only with
//! both; one that accepts dots, or renames them itself, does not (Cursor calls a dotted tool
//! by its `_` spelling, gemini-cli-extensions/workspace#168, which every style routes; VS Code
//! remaps names itself, github/copilot-cli#2581).

/// One client that rejects dotted tool names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DotlessClient {
    /// The `clientInfo.name` it sends in `initialize` (and, on protocol 2026-07-28, in each
    /// request's `_meta` `io.modelcontextprotocol/clientInfo`).
    pub name: &'static str,
    /// The product, for people.
    pub product: &'static str,
    /// Where its `clientInfo.name` was seen sent.
    pub name_evidence: &'static [&'static str],
    /// Where it was seen refusing a dotted (or otherwise off-pattern) tool name.
    pub rejects_evidence: &'static [&'static str],
}

/// Every client known to reject dotted tool names.
pub const DOTLESS_CLIENTS: &[DotlessClient] = &[
    DotlessClient {
        name: "claude-code",
        product: "Claude Code",
        name_evidence: &[
            // A raw initialize of Claude Code 2.0.73: "clientInfo":{"name":"claude-code","version":"2.0.73"}.
            "https://github.com/cl-ai-project/cl-mcp/issues/26",
            // "observed MCP clientInfo.name: claude-code" with Claude Code 2.1.143.
            "https://github.com/screenpipe/screenpipe/pull/5796",
        ],
        rejects_evidence: &[
            // API Error 400: tools.15.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'
            // for `local:time-server/time.get-current-time`; Claude Code then runs nothing.
            "https://github.com/microsoft/wassette/issues/56",
            // The same pattern refusing a `.` in a version-numbered tool name.
            "https://github.com/mastergo-design/mastergo-magic-mcp/issues/34",
        ],
    },
    DotlessClient {
        name: "claude-ai",
        product: "Claude Desktop and claude.ai",
        name_evidence: &[
            // Claude Desktop's log: "clientInfo":{"name":"claude-ai","version":"0.1.0"}.
            "https://github.com/modelcontextprotocol/typescript-sdk/issues/179",
            // The same on protocol 2025-06-18 (August 2025).
            "https://github.com/0x4m4/hexstrike-ai/issues/11",
        ],
        rejects_evidence: &[
            // tools.25.FrontendRemoteMcpToolDefinition.name: String should match pattern
            // '^[a-zA-Z0-9_-]{1,64}$', all-or-nothing: the connector's chats see no tools.
            "https://github.com/evoila/meho/issues/2745",
            "https://github.com/barryw/ImmichMCP/issues/4",
            "https://github.com/mattt/iMCP/pull/71",
        ],
    },
    DotlessClient {
        name: "codex-mcp-client",
        product: "OpenAI Codex (CLI, IDE extension)",
        name_evidence: &[
            // "observed MCP clientInfo.name: codex-mcp-client" with codex-cli 0.146.0-alpha.
            "https://github.com/screenpipe/screenpipe/pull/5796",
        ],
        rejects_evidence: &[
            // Codex 0.73.0: Invalid 'tools[48].name': string does not match pattern
            // '^[a-zA-Z0-9_-]+$' for `calendar.respondToEvent` and the like (open).
            "https://github.com/openai/codex/issues/8174",
        ],
    },
    DotlessClient {
        name: "openai-mcp",
        product: "ChatGPT connectors and the OpenAI Responses API's MCP tool",
        name_evidence: &[
            // Connection logs quoted in public ChatGPT Deep Research compliance notes:
            // "clientInfo":{"name":"openai-mcp","version":"1.0.0"} (no repository to cite;
            // the OpenAI community thread they point to is
            // https://community.openai.com/t/how-to-set-up-a-remote-mcp-server-and-connect-it-to-chatgpt-deep-research/1278375).
            "https://community.openai.com/t/how-to-set-up-a-remote-mcp-server-and-connect-it-to-chatgpt-deep-research/1278375",
        ],
        rejects_evidence: &[
            // The Responses API's MCP tool: Invalid 'tools[0].name': string does not match
            // pattern (a `.` in the name).
            "https://github.com/openai/openai-dotnet/issues/441",
        ],
    },
    DotlessClient {
        name: "github-copilot-developer",
        product: "GitHub Copilot CLI",
        name_evidence: &[
            // "clientInfo":{"name":"github-copilot-developer","version":"1.0.25"}.
            "https://github.com/github/copilot-cli/issues/1268",
        ],
        rejects_evidence: &[
            // CAPIError: 400 tools.19.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'.
            "https://github.com/github/copilot-cli/issues/2581",
            "https://github.com/github/copilot-cli/issues/1879",
        ],
    },
];

/// The table entry of the client that calls itself `client_name`, if it rejects dots.
///
/// The name matches exactly, or followed by a space and more (a bridge that appends itself,
/// as mcp-remote does: `claude-ai (via mcp-remote 0.1.29)`).
pub fn dotless_client(client_name: &str) -> Option<&'static DotlessClient> {
    DOTLESS_CLIENTS.iter().find(|c| {
        client_name == c.name || client_name.strip_prefix(c.name).is_some_and(|rest| rest.starts_with(' '))
    })
}

/// Whether the client that calls itself `client_name` rejects dotted tool names.
pub fn rejects_dots(client_name: &str) -> bool {
    dotless_client(client_name).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_exactly_or_with_a_bridge_suffix() {
        for entry in DOTLESS_CLIENTS {
            assert!(rejects_dots(entry.name), "{}", entry.name);
            assert!(!entry.name_evidence.is_empty() && !entry.rejects_evidence.is_empty(), "{}", entry.name);
        }
        assert!(rejects_dots("claude-ai (via mcp-remote 0.1.29)"));
        for other in ["", "claude", "claude-code-x", "Claude-Code", "cursor-vscode", "rmcp", "charly"] {
            assert!(!rejects_dots(other), "{other}");
        }
    }
}
