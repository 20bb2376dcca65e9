"""The server framework driven by the official Python MCP SDK (mcp==2.3.0) over stdio and
Streamable HTTP, against a catalog derived from a clap CLI: listing across pages, calls,
isError results, progress tokens (a number, 0, a string), cancellation killing the child
process, read-only refusal, the bearer token and a foreign Origin."""
import asyncio
import os
import pathlib

import anyio
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from conftest import http_server, server_bin

ALL_TOOLS = ["echo", "count", "wait", "fail", "even", "delete", "box.list", "box.show"]
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "py", "version": "0"}},
}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def text(result) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


async def all_tool_names(session: ClientSession) -> tuple[list[str], int]:
    names, cursor, pages = [], None, 0
    while True:
        page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
        pages += 1
        names += [t.name for t in page.tools]
        cursor = page.next_cursor
        if cursor is None:
            return names, pages


async def exercise(session: ClientSession) -> None:
    await session.initialize()
    names, pages = await all_tool_names(session)
    assert names == ALL_TOOLS
    assert pages == 3  # 8 tools, 3 a page; the last page has no cursor
    assert text(await session.call_tool("echo", {"text": "--not-a-flag"})) == "--not-a-flag\n"
    assert text(await session.call_tool("box.show", {"name": "web"})) == "box web\n"
    for name, args, needle in [
        ("fail", {}, "always fails"),
        ("even", {"n": "3"}, "3 is not an even number"),
        ("echo", {}, "text"),
        ("echo", {"text": "x", "bogus": 1}, "bogus"),
    ]:
        result = await session.call_tool(name, args)
        assert result.is_error, f"{name} {args}: {text(result)}"
        assert needle in text(result) and (name in text(result) or name in ("fail", "even")), text(result)


def test_stdio():
    params = StdioServerParameters(command=server_bin(), args=["--stdio"])

    async def go():
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as session:
                await exercise(session)

    asyncio.run(go())


def test_streamable_http():
    async def go(url):
        async with streamable_http_client(url) as (r, w, *_):
            async with ClientSession(r, w) as session:
                await exercise(session)

    with http_server() as url:
        asyncio.run(go(url))


@pytest.mark.parametrize("token", ["callback", 0, 7, "tok-1"])
def test_progress_token_is_echoed(token):
    """`callback` lets the SDK pick the token (its request id); the others are set in _meta."""
    seen = []

    async def on_message(message):
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/progress":
            seen.append((root.params.progress_token, root.params.progress))

    async def go(url):
        async with streamable_http_client(url) as (r, w, *_):
            async with ClientSession(r, w, message_handler=on_message) as session:
                await session.initialize()
                if token == "callback":
                    got = []

                    async def cb(progress, total, message):
                        got.append((progress, total))

                    result = await session.call_tool("count", {"to": 3}, progress_callback=cb)
                    assert got == [(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)]
                else:
                    result = await session.call_tool("count", {"to": 3}, meta={"progressToken": token})
                    await anyio.sleep(0.2)
                    assert seen == [(token, 1.0), (token, 2.0), (token, 3.0)]
                    assert all(type(t) is type(token) for t, _ in seen)
                assert text(result) == "counted to 3\n"

    with http_server() as url:
        asyncio.run(go(url))


def test_cancellation_kills_the_child(tmp_path: pathlib.Path):
    pidfile = tmp_path / "child.pid"

    async def go(url):
        async with streamable_http_client(url) as (r, w, *_):
            async with ClientSession(r, w) as session:
                await session.initialize()
                with anyio.move_on_after(1.0):
                    await session.call_tool("wait", {"secs": 30, "pidfile": str(pidfile)})
                pid = int(pidfile.read_text())
                for _ in range(100):
                    if not alive(pid):
                        break
                    await anyio.sleep(0.05)
                assert not alive(pid), f"child {pid} survived the cancelled call"
                assert text(await session.call_tool("echo", {"text": "after"})) == "after\n"

    with http_server() as url:
        asyncio.run(go(url))


def alive(pid: int) -> bool:
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        # Gone before the open (ENOENT), or between the open and the read (ESRCH).
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_read_only_refuses_destructive_tools():
    async def go(url):
        async with streamable_http_client(url) as (r, w, *_):
            async with ClientSession(r, w) as session:
                await session.initialize()
                names, _ = await all_tool_names(session)
                assert "delete" not in names and len(names) == len(ALL_TOOLS) - 1
                with pytest.raises(Exception) as err:
                    await session.call_tool("delete", {"what": "everything"})
                # As a read-only build answers (issue 18, item 4): nothing says the tool exists.
                assert "unknown tool `delete`" in str(err.value)
                assert "read-only" not in str(err.value) and "destructive" not in str(err.value)
                assert text(await session.call_tool("echo", {"text": "alive"})) == "alive\n"

    with http_server("--read-only") as url:
        asyncio.run(go(url))


def test_bearer_token_refused_and_accepted():
    async def go(url):
        async with httpx2.AsyncClient() as raw:
            assert (await raw.post(url, json=INIT, headers=ACCEPT)).status_code == 401
            wrong = {**ACCEPT, "authorization": "Bearer nope"}
            assert (await raw.post(url, json=INIT, headers=wrong)).status_code == 401
        async with httpx2.AsyncClient(headers={"authorization": "Bearer py-secret"}) as authed:
            async with streamable_http_client(url, http_client=authed) as (r, w, *_):
                async with ClientSession(r, w) as session:
                    await session.initialize()
                    assert text(await session.call_tool("echo", {"text": "in"})) == "in\n"

    with http_server("--token-env", "TOY_TOKEN", env={"TOY_TOKEN": "py-secret"}) as url:
        asyncio.run(go(url))


def test_foreign_origin_is_refused():
    async def go(url):
        async with httpx2.AsyncClient() as raw:
            evil = await raw.post(url, json=INIT, headers={**ACCEPT, "origin": "http://evil.example.com"})
            assert evil.status_code == 403
            own = await raw.post(url, json=INIT, headers={**ACCEPT, "origin": url.rsplit("/", 1)[0]})
            assert own.status_code == 200

    with http_server() as url:
        asyncio.run(go(url))


def test_deleting_the_session_stops_its_running_call(tmp_path: pathlib.Path):
    """A client that goes away (DELETE of its session) stops its calls, child processes included."""
    import http.client
    import json
    import threading
    import time
    import urllib.parse

    pidfile = tmp_path / "child.pid"
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-06-18",
    }

    def post(u, body, hdrs):
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        conn.request("POST", u.path, json.dumps(body), hdrs)
        return conn, conn.getresponse()

    with http_server() as url:
        u = urllib.parse.urlparse(url)
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        conn, r = post(u, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}, headers)
        r.read()
        session = {**headers, "mcp-session-id": r.getheader("mcp-session-id")}
        post(u, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)[1].read()
        call = {"name": "wait", "arguments": {"secs": 30, "pidfile": str(pidfile)}}

        def run_call():
            _, response = post(u, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}, session)
            try:
                response.read()
            except OSError:
                pass

        threading.Thread(target=run_call, daemon=True).start()
        for _ in range(200):
            if pidfile.exists() and pidfile.read_text().strip():
                break
            time.sleep(0.05)
        pid = int(pidfile.read_text())
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        conn.request("DELETE", u.path, headers={"mcp-session-id": session["mcp-session-id"]})
        assert conn.getresponse().status < 300
        # The call stops as the DELETE is answered; rmcp alone would let it run on through its
        # 5 s drain before closing the session's transport.
        deadline = time.monotonic() + 2.5
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid), f"child {pid} outlived its deleted session"
