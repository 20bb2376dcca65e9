"""`charly mcp serve` and MCP 2026-07-28, driven by the Python SDK's high-level `mcp.Client`.

Its default `mode="auto"` offers 2026-07-28 first (`server/discover`) and falls back to the
`initialize` handshake; `mode="legacy"` forces the handshake. charly answers the first with a
2026-07-28 session (no handshake, per-request `_meta`) over Streamable HTTP and over stdio, and
the second with 2025-11-25; the same project gets built either way.
"""
import asyncio

import pytest
from mcp import Client, StdioServerParameters

from conftest import charly_bin, clean_env, free_port, running
from test_charly_serve import BUILD_STEPS, text


async def build_with(client: Client, project) -> None:
    names = {t.name for t in (await client.list_tools()).tools}
    assert {name for name, _ in BUILD_STEPS} <= names
    for name, args in BUILD_STEPS:
        result = await client.call_tool(name, args)
        assert not result.is_error, f"{name}: {text(result)}"
    boxes = await client.call_tool("box.list.boxes", {})
    assert text(boxes).split() == ["web"]
    # A bad argument is an error result on this revision too, and the session goes on.
    bad = await client.call_tool("box.cat", {"path": "../x"})
    assert bad.is_error and ".." in text(bad)
    cat = await client.call_tool("box.cat", {"path": "box/README.md"})
    assert text(cat) == "# web\n--help is just text\n"
    assert (project / "candy" / "tools" / "charly.yml").exists()


@pytest.mark.parametrize("mode,version", [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_streamable_http_negotiates_the_revision_the_client_offers(tmp_path, mode, version):
    project = tmp_path / "proj"
    project.mkdir()
    port = free_port()
    cmd = [charly_bin(), "-C", str(project), "mcp", "serve", "--listen", f"127.0.0.1:{port}"]

    async def go():
        async with Client(f"http://127.0.0.1:{port}/mcp", mode=mode) as client:
            assert client.protocol_version == version
            await build_with(client, project)

    with running(cmd, port, env=clean_env(tmp_path)):
        asyncio.run(go())


@pytest.mark.parametrize("mode,version", [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_stdio_negotiates_the_revision_the_client_offers(tmp_path, mode, version):
    project = tmp_path / "proj"
    project.mkdir()
    params = StdioServerParameters(
        command=charly_bin(),
        args=["mcp", "serve", "--stdio"],
        env={**clean_env(tmp_path), "CHARLY_PROJECT_DIR": str(project)},
    )

    async def go():
        async with Client(params, mode=mode) as client:
            assert client.protocol_version == version
            await build_with(client, project)

    asyncio.run(go())


# ----- the same with raw JSON-RPC: what a 2026-07-28 request is on the wire -----

import json
import subprocess
import urllib.error
import urllib.request

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def request(id_, method, params=None, meta=True):
    params = dict(params or {})
    if meta:
        params["_meta"] = META
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def post(port, body, headers):
    """POSTs `body`; (status, headers, the JSON-RPC messages of a JSON or SSE answer)."""
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "accept": "application/json, text/event-stream", **headers},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            status, got, raw = resp.status, resp.headers, resp.read().decode()
    except urllib.error.HTTPError as e:
        status, got, raw = e.code, e.headers, e.read().decode()
    if got.get("content-type", "").startswith("text/event-stream"):
        messages = [json.loads(l[5:]) for l in raw.splitlines() if l.startswith("data:") and l[5:].strip()]
    else:
        messages = [json.loads(raw)] if raw.strip() else []
    return status, got, messages


def modern(method, name=None):
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": method}
    if name:
        headers["mcp-name"] = name
    return headers


def test_raw_2026_requests_over_streamable_http(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "charly.yml").write_text("project:\n  version: 1\nweb:\n  box:\n    base: quay.io/fedora/fedora:43\n")
    port = free_port()
    cmd = [charly_bin(), "-C", str(project), "mcp", "serve", "--listen", f"127.0.0.1:{port}"]
    with running(cmd, port, env=clean_env(tmp_path)):
        status, headers, [found] = post(port, request(1, "server/discover"), modern("server/discover"))
        assert status == 200 and "mcp-session-id" not in headers
        assert "2026-07-28" in found["result"]["supportedVersions"]
        assert "2025-11-25" in found["result"]["supportedVersions"]
        # No session: every request stands alone, with its own _meta and headers.
        _, headers, [listed] = post(port, request(2, "tools/list"), modern("tools/list"))
        assert "mcp-session-id" not in headers
        assert "box.list.boxes" in [t["name"] for t in listed["result"]["tools"]]
        call = request(3, "tools/call", {"name": "box.list.boxes", "arguments": {}})
        _, _, [called] = post(port, call, modern("tools/call", "box.list.boxes"))
        assert called["result"]["content"][0]["text"].split() == ["web"], called
        # The routing headers are checked against the body.
        status, _, [refused] = post(port, call, modern("tools/call", "box.cat"))
        assert status == 400 and refused["error"]["code"] == -32020, refused
        # Without the _meta the revision requires, the request is refused, naming what is missing.
        status, _, [bare] = post(port, request(4, "tools/list", meta=False), modern("tools/list"))
        assert "error" in bare, bare
        # initialize was removed in 2026-07-28; offered in a handshake, 2026-07-28 gets 2025-11-25.
        status, _, [removed] = post(port, request(5, "initialize"), modern("initialize"))
        assert removed["error"]["code"] == -32601, removed
        init = {"protocolVersion": "2026-07-28", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
        _, headers, messages = post(port, request(6, "initialize", init, meta=False), {})
        assert headers.get("mcp-session-id")
        assert messages[-1]["result"]["protocolVersion"] == "2025-11-25", messages


def test_raw_2026_requests_over_stdio(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "charly.yml").write_text("project:\n  version: 1\nweb:\n  box:\n    base: quay.io/fedora/fedora:43\n")
    env = {**clean_env(tmp_path), "CHARLY_PROJECT_DIR": str(project)}
    lines = [
        request(1, "server/discover"),
        request(2, "tools/list"),
        request(3, "tools/call", {"name": "box.list.boxes", "arguments": {}}),
        request(4, "tools/call", {"name": "box.cat", "arguments": {"path": "charly.yml"}}),
    ]
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    proc = subprocess.Popen(
        [charly_bin(), "mcp", "serve", "--stdio"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
    )
    try:
        proc.stdin.write(stdin)
        proc.stdin.flush()
        answers = {}
        while len(answers) < len(lines):
            line = proc.stdout.readline()
            assert line, f"stdout closed early; stderr: {proc.stderr.read()}"
            message = json.loads(line)
            if "id" in message:
                answers[message["id"]] = message
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
        # Closing stdin after a stateless exchange is a normal end, with nothing on stderr.
        assert "handshake failed" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "2026-07-28" in answers[1]["result"]["supportedVersions"]
    assert "box.list.boxes" in [t["name"] for t in answers[2]["result"]["tools"]]
    assert answers[3]["result"]["content"][0]["text"].split() == ["web"]
    assert "quay.io/fedora/fedora:43" in answers[4]["result"]["content"][0]["text"]
