"""`charly mcp serve`'s resources as the official Python MCP SDK sees them (trial 28, M4).

`resources/list` gives the project's YAML files as they are at the time of the call (a candy
made over MCP is listed at once), the server declares `listChanged` and announces the change
with `notifications/resources/list_changed`, and a subscribed file changed by a tool call of
the server brings `notifications/resources/updated` for its URI (it declares `subscribe`).
Over Streamable HTTP and over stdio.
"""
import asyncio

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from conftest import charly_bin, clean_env, free_port, running

CHARLY_YML = "charly://project/charly.yml"
TOOLS_CANDY = "charly://project/candy/tools/charly.yml"


class Notifications:
    """The resource notifications a session received, by method."""

    def __init__(self):
        self.seen = []
        self.event = anyio.Event()

    async def handler(self, message):
        method = getattr(getattr(message, "root", message), "method", None)
        if method and method.startswith("notifications/resources/"):
            params = getattr(getattr(message, "root", message), "params", None)
            self.seen.append((method, str(getattr(params, "uri", "")) if params else ""))
            self.event.set()

    async def wait_for(self, method: str, uri: str = "", timeout: float = 10.0):
        with anyio.fail_after(timeout):
            while (method, uri) not in self.seen:
                self.event = anyio.Event()
                await self.event.wait()

    def count(self, method: str, uri: str = "") -> int:
        return self.seen.count((method, uri))


async def uris(session: ClientSession) -> set[str]:
    return {str(r.uri) for r in (await session.list_resources()).resources}


async def exercise(session: ClientSession, notes: Notifications) -> None:
    init = await session.initialize()
    caps = init.capabilities.resources
    assert caps.subscribe is True and caps.list_changed is True, caps
    await session.call_tool("box.new.project", {"dir": "."})
    await notes.wait_for("notifications/resources/list_changed")
    listed = await uris(session)
    assert CHARLY_YML in listed and TOOLS_CANDY not in listed, listed

    # A candy made over MCP is listed at once, and the list's change is announced.
    changed = notes.count("notifications/resources/list_changed")
    result = await session.call_tool("box.new.candy", {"name": "tools"})
    assert not result.is_error, result
    assert TOOLS_CANDY in await uris(session)
    await notes.wait_for("notifications/resources/list_changed")
    assert notes.count("notifications/resources/list_changed") == changed + 1, notes.seen

    # A subscribed file changed by a tool call: `updated` for its URI, and only for it.
    await session.subscribe_resource(CHARLY_YML)
    result = await session.call_tool("box.new.box", {"name": "web", "base": "quay.io/fedora/fedora:43"})
    assert not result.is_error, result
    await notes.wait_for("notifications/resources/updated", CHARLY_YML)
    read = await session.read_resource(CHARLY_YML)
    assert "web:" in read.contents[0].text

    # A read-only call and an edit of another file leave it alone.
    updated = notes.count("notifications/resources/updated", CHARLY_YML)
    await session.call_tool("box.list.boxes", {})
    await session.call_tool("candy.add-rpm", {"name": "tools", "packages": ["curl"]})
    await anyio.sleep(0.5)
    assert notes.count("notifications/resources/updated", CHARLY_YML) == updated, notes.seen
    assert notes.count("notifications/resources/updated", TOOLS_CANDY) == 0, notes.seen

    # After unsubscribing, a change is not announced.
    await session.unsubscribe_resource(CHARLY_YML)
    await session.call_tool("box.set", {"path": "web.box.description", "value": "a web box"})
    await anyio.sleep(0.5)
    assert notes.count("notifications/resources/updated", CHARLY_YML) == updated, notes.seen


def test_resources_follow_the_project_over_streamable_http(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    port = free_port()
    cmd = [charly_bin(), "-C", str(project), "mcp", "serve", "--listen", f"127.0.0.1:{port}"]
    notes = Notifications()

    async def go():
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (r, w, *_):
            async with ClientSession(r, w, message_handler=notes.handler) as session:
                await exercise(session, notes)

    with running(cmd, port, env=clean_env(tmp_path)):
        asyncio.run(go())


def test_resources_follow_the_project_over_stdio(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    params = StdioServerParameters(
        command=charly_bin(), args=["mcp", "serve", "--stdio"], env={**clean_env(tmp_path), "CHARLY_PROJECT_DIR": str(project)}
    )
    notes = Notifications()

    async def go():
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w, message_handler=notes.handler) as session:
                await exercise(session, notes)

    asyncio.run(go())


def test_a_second_session_hears_of_the_first_ones_changes(tmp_path):
    """Another client of the same HTTP server, subscribed to charly.yml, hears of a change a
    call of the first client made, and of the new candy in the list."""
    project = tmp_path / "proj"
    project.mkdir()
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    cmd = [charly_bin(), "-C", str(project), "mcp", "serve", "--listen", f"127.0.0.1:{port}"]
    watcher = Notifications()

    async def go():
        async with streamable_http_client(url) as (r1, w1, *_), streamable_http_client(url) as (r2, w2, *_):
            async with ClientSession(r1, w1) as editor, ClientSession(r2, w2, message_handler=watcher.handler) as other:
                await editor.initialize()
                await editor.call_tool("box.new.project", {"dir": "."})
                await other.initialize()
                await other.subscribe_resource(CHARLY_YML)
                await editor.call_tool("box.new.box", {"name": "web", "base": "quay.io/fedora/fedora:43"})
                await watcher.wait_for("notifications/resources/updated", CHARLY_YML)
                await editor.call_tool("box.new.candy", {"name": "tools"})
                await watcher.wait_for("notifications/resources/list_changed")
                assert TOOLS_CANDY in await uris(other)

    with running(cmd, port, env=clean_env(tmp_path)):
        asyncio.run(go())


def test_a_2026_listen_stream_hears_the_same_changes(tmp_path):
    """Protocol 2026-07-28 has no `resources/subscribe`: a `subscriptions/listen` stream asks
    for `resourcesListChanged` and charly.yml, is granted both, and hears of both changes."""
    from mcp import Client
    from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated

    project = tmp_path / "proj"
    project.mkdir()
    port = free_port()
    cmd = [charly_bin(), "-C", str(project), "mcp", "serve", "--listen", f"127.0.0.1:{port}"]

    async def next_event(sub):
        with anyio.fail_after(10):
            return await sub.__anext__()

    async def go():
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            assert client.protocol_version == "2026-07-28"
            await client.call_tool("box.new.project", {"dir": "."})
            async with client.listen(resources_list_changed=True, resource_subscriptions=[CHARLY_YML]) as sub:
                assert sub.honored.resources_list_changed is True, sub.honored
                assert list(sub.honored.resource_subscriptions or []) == [CHARLY_YML], sub.honored
                await client.call_tool("box.new.candy", {"name": "tools"})
                assert await next_event(sub) == ResourcesListChanged()
                await client.call_tool("box.new.box", {"name": "web", "base": "quay.io/fedora/fedora:43"})
                assert await next_event(sub) == ResourceUpdated(uri=CHARLY_YML)

    with running(cmd, port, env=clean_env(tmp_path)):
        asyncio.run(go())
