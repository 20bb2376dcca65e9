"""`charly mcp serve --tool-names` seen by the official Python MCP SDK, as the clients it names.

A client that says it is `claude-code` in `clientInfo` (which rejects dotted tool names) gets
`_`-joined names under `--tool-names auto` (the default); `some-other-client` gets the dotted
ones; `--tool-names underscore` gives `_` names to everyone, `dotted` dots to everyone. Whatever
was listed, a call by either spelling runs the same tool. Over stdio and Streamable HTTP, and on
both revisions the SDK speaks: 2026-07-28 (`mode="auto"`, the SDK's default, where the client
names itself in every request's `_meta`) and 2025-11-25 (`mode="legacy"`, the `initialize`
handshake).
"""
import asyncio
import re

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import Implementation

from conftest import charly_bin, clean_env, free_port, running
from test_charly_serve import text

# What Claude's clients and OpenAI's accept (and otherwise drop the whole tool list).
STRICT_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

MODES = [("auto", "2026-07-28"), ("legacy", "2025-11-25")]

# (client name, --tool-names, whether the names listed are `_`-joined)
CASES = [
    ("claude-code", None, True),
    ("some-other-client", None, False),
    ("some-other-client", "underscore", True),
    ("claude-code", "dotted", False),
]


def case_id(case) -> str:
    client, style, _ = case
    return f"{client}-{style or 'default'}"


async def check_names(client: Client, version: str, underscored: bool) -> None:
    assert client.protocol_version == version
    names = [t.name for t in (await client.list_tools()).tools]
    assert len(names) > 20, names
    if underscored:
        assert "box_new_project" in names and "check_mcp_call" in names, names
        bad = [n for n in names if "." in n or not STRICT_NAME.match(n)]
        assert not bad, f"names a strict host refuses: {bad}"
    else:
        assert "box.new.project" in names and "check.mcp.call" in names, names
        assert "box_new_project" not in names and "check_mcp_call" not in names, names
    # Both spellings call the tool, whichever was listed: the embedded sample's one box.
    for name in ["box_list_boxes", "box.list.boxes"]:
        result = await client.call_tool(name, {})
        assert not result.is_error, f"{name}: {text(result)}"
        assert text(result).split() == ["hello"], f"{name}: {text(result)}"
    # A name that is neither spelling of a tool is still unknown.
    with pytest.raises(Exception) as err:
        await client.call_tool("box_list_nothing", {})
    assert "box_list_nothing" in str(err.value)


def serve_args(style: str | None) -> list[str]:
    return ["mcp", "serve"] + ([] if style is None else ["--tool-names", style])


@pytest.mark.parametrize("mode,version", MODES)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_stdio_names_per_client(tmp_path, case, mode, version):
    name, style, underscored = case
    cwd = tmp_path / "empty"
    cwd.mkdir()
    params = StdioServerParameters(
        command=charly_bin(), args=serve_args(style) + ["--stdio"], env=clean_env(tmp_path), cwd=str(cwd)
    )

    async def go():
        info = Implementation(name=name, version="2.1.0")
        async with Client(params, mode=mode, client_info=info) as client:
            await check_names(client, version, underscored)

    asyncio.run(go())


@pytest.mark.parametrize("mode,version", MODES)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_streamable_http_names_per_client(tmp_path, case, mode, version):
    name, style, underscored = case
    cwd = tmp_path / "empty"
    cwd.mkdir()
    port = free_port()
    cmd = [charly_bin()] + serve_args(style) + ["--listen", f"127.0.0.1:{port}"]

    async def go():
        info = Implementation(name=name, version="2.1.0")
        async with Client(f"http://127.0.0.1:{port}/mcp", mode=mode, client_info=info) as client:
            await check_names(client, version, underscored)

    with running(cmd, port, env=clean_env(tmp_path), cwd=cwd):
        asyncio.run(go())


def test_two_clients_of_one_http_server_see_their_own_spelling(tmp_path):
    """One server, two sessions at once: each keeps its own spelling."""
    cwd = tmp_path / "empty"
    cwd.mkdir()
    port = free_port()
    cmd = [charly_bin(), "mcp", "serve", "--listen", f"127.0.0.1:{port}"]
    url = f"http://127.0.0.1:{port}/mcp"

    async def go():
        claude = Client(url, mode="legacy", client_info=Implementation(name="claude-code", version="2.1.0"))
        other = Client(url, mode="legacy", client_info=Implementation(name="some-other-client", version="1"))
        async with claude as c, other as o:
            for _ in range(2):
                c_names = {t.name for t in (await c.list_tools()).tools}
                o_names = {t.name for t in (await o.list_tools()).tools}
                assert "box_new_project" in c_names and "box.new.project" not in c_names
                assert "box.new.project" in o_names and "box_new_project" not in o_names
                assert {n.replace(".", "_") for n in o_names} == c_names

    with running(cmd, port, env=clean_env(tmp_path), cwd=cwd):
        asyncio.run(go())
