"""`charly mcp serve` driven end to end by the official Python MCP SDK client.

An agent builds a project from nothing over Streamable HTTP and over stdio; afterwards the
project validates and `box.generate` writes the expected Containerfile. A `--read-only` server
refuses the same destructive calls. Regression tests for DESIGN.md's defects live here too.
"""
import asyncio
import json
import pathlib

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import PaginatedRequestParams, ResourceTemplateReference

from conftest import charly_bin, clean_env, free_port, running

BUILD_STEPS = [
    ("box.new.project", {"dir": "."}),
    ("box.new.candy", {"name": "tools"}),
    ("box.new.box", {"name": "web", "base": "quay.io/fedora/fedora:43"}),
    ("candy.add-rpm", {"name": "tools", "packages": ["curl", "jq"]}),
    ("candy.add-deb", {"name": "tools", "packages": ["curl"]}),
    ("box.add-candy", {"box": "web", "candy": "tools"}),
    ("box.set", {"path": "web.box.description", "value": "a web box"}),
    ("box.write", {"path": "box/README.md", "content": "# web\n--help is just text\n"}),
]


def text(result) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


async def all_tools(session: ClientSession) -> list:
    """Every tool of every tools/list page (the server pages its 200-odd tools)."""
    tools, cursor = [], None
    for _ in range(100):
        page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools
    raise AssertionError("tools/list gave a nextCursor on 100 pages in a row")


async def build_project(session: ClientSession, project: pathlib.Path) -> None:
    await session.initialize()
    names = {t.name for t in (await all_tools(session))}
    assert {name for name, _ in BUILD_STEPS} <= names
    assert "mcp.serve" not in names
    for name, args in BUILD_STEPS:
        result = await session.call_tool(name, args)
        assert not result.is_error, f"{name}: {text(result)}"
    cat = await session.call_tool("box.cat", {"path": "box/README.md"})
    assert text(cat) == "# web\n--help is just text\n"
    validate = await session.call_tool("box.validate", {})
    assert not validate.is_error, text(validate)
    generate = await session.call_tool("box.generate", {"box": "web"})
    assert not generate.is_error, text(generate)
    containerfile = (project / ".build" / "web" / "Containerfile").read_text()
    assert "FROM quay.io/fedora/fedora:43" in containerfile
    assert "dnf" in containerfile and "curl" in containerfile and "jq" in containerfile
    assert "ai.opencharly.mcp_provide" in containerfile
    candy = (project / "candy" / "tools" / "charly.yml").read_text()
    # add-rpm and add-deb each wrote their own section (a defect of the reference).
    assert "fedora" in candy and "debian,ubuntu" in candy


def test_build_a_project_over_streamable_http(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    port = free_port()
    cmd = [charly_bin(), "-C", str(project), "mcp", "serve", "--listen", f"127.0.0.1:{port}"]

    async def go():
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (r, w, *_):
            async with ClientSession(r, w) as session:
                await build_project(session, project)

    with running(cmd, port, env=clean_env(tmp_path)):
        asyncio.run(go())


def test_build_a_project_over_stdio(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    params = StdioServerParameters(
        command=charly_bin(), args=["mcp", "serve", "--stdio"], env={**clean_env(tmp_path), "CHARLY_PROJECT_DIR": str(project)}
    )

    async def go():
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as session:
                await build_project(session, project)

    asyncio.run(go())


def test_read_only_server_refuses_destructive_calls(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "charly.yml").write_text("project:\n  version: 1\n")
    port = free_port()
    cmd = [charly_bin(), "-C", str(project), "mcp", "serve", "--read-only", "--listen", f"127.0.0.1:{port}"]

    async def go():
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (r, w, *_):
            async with ClientSession(r, w) as session:
                await session.initialize()
                names = {t.name for t in (await all_tools(session))}
                assert "box.validate" in names and "check.mcp.servers" in names
                # Tools that start processes or write the repository cache are left out too.
                for name in ["check.mcp.ping", "check.mcp.list-tools", "check.mcp.read", "box.fetch"]:
                    assert name not in names, name
                for name, args in BUILD_STEPS:
                    assert name not in names
                    with pytest.raises(Exception) as err:
                        await session.call_tool(name, args)
                    assert name in str(err.value)
                # The session is still alive after the refusals.
                assert not (await session.call_tool("box.list.boxes", {})).is_error

    with running(cmd, port, env=clean_env(tmp_path)):
        asyncio.run(go())
    assert (project / "charly.yml").read_text() == "project:\n  version: 1\n"


def test_bad_input_is_an_error_result_and_loses_nothing(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    original = "# keep me\nproject:\n    version: 1   # four-space indent\n"
    (project / "charly.yml").write_text(original)
    port = free_port()
    cmd = [charly_bin(), "-C", str(project), "mcp", "serve", "--listen", f"127.0.0.1:{port}"]

    async def go():
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (r, w, *_):
            async with ClientSession(r, w) as session:
                await session.initialize()
                cases = [
                    ("box.set", {"path": "project.version.x", "value": "1"}, "version"),
                    ("box.set", {"path": "a", "value": "1", "bogus": True}, "bogus"),
                    ("box.cat", {"path": "/etc/passwd"}, "absolute"),
                    ("box.cat", {"path": "../x"}, ".."),
                    ("box.new.box", {"name": "web"}, "base"),
                    ("candy.add-rpm", {"name": "nope", "packages": ["x"]}, "nope"),
                ]
                for name, args, needle in cases:
                    result = await session.call_tool(name, args)
                    assert result.is_error, f"{name} {args}: {text(result)}"
                    assert needle in text(result), f"{name}: {text(result)}"
                assert not (await session.call_tool("version", {})).is_error

    with running(cmd, port, env=clean_env(tmp_path)):
        asyncio.run(go())
    assert (project / "charly.yml").read_text() == original
    assert sorted(p.name for p in project.iterdir()) == ["charly.yml"]


def test_embedded_sample_is_served_when_no_project_is_named(tmp_path):
    port = free_port()
    cwd = tmp_path / "empty"
    cwd.mkdir()
    cmd = [charly_bin(), "mcp", "serve", "--listen", f"127.0.0.1:{port}"]

    async def go():
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (r, w, *_):
            async with ClientSession(r, w) as session:
                await session.initialize()
                boxes = await session.call_tool("box.list.boxes", {})
                assert text(boxes).split() == ["hello"]
                uris = [str(r.uri) for r in (await session.list_resources()).resources]
                assert "charly://project/charly.yml" in uris
                read = await session.read_resource("charly://project/candy/hello-svc/charly.yml")
                assert "hello-svc" in read.contents[0].text
                # The candy template's {name} completes to the candies that exist.
                ref = ResourceTemplateReference(type="ref/resource", uri="charly://project/candy/{name}/charly.yml")
                done = await session.complete(ref, {"name": "name", "value": "hel"})
                assert done.completion.values == ["hello-svc"]
                none = await session.complete(ref, {"name": "name", "value": "x"})
                assert none.completion.values == []

    with running(cmd, port, env=clean_env(tmp_path), cwd=cwd) as proc:
        asyncio.run(go())
    assert "embedded sample project" in proc.stderr.read().decode()


def test_no_default_repo_fails_and_lists_the_ways_to_name_a_project(tmp_path):
    import subprocess

    cwd = tmp_path / "empty"
    cwd.mkdir()
    done = subprocess.run(
        [charly_bin(), "mcp", "serve", "--no-default-repo", "--listen", f"127.0.0.1:{free_port()}"],
        cwd=cwd, env=clean_env(tmp_path), capture_output=True, timeout=30,
    )
    assert done.returncode == 2
    err = done.stderr.decode()
    assert "-C/--dir" in err and "CHARLY_PROJECT_DIR" in err and "CHARLY_PROJECT_REPO" in err


def test_served_paths_stay_inside_the_project(tmp_path):
    """A fresh user's report: box.new.project and check.run's junit/plan paths left the root."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "charly.yml").write_text("project:\n  version: 1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "link").symlink_to(outside)
    (tmp_path / "plan.yml").write_text("p:\n  check: x\n  mcp: ping\n  context: [deploy]\n")
    evil = tmp_path / "evil"
    evil.mkdir()
    ran = evil / "RAN"
    (evil / ".mcp.json").write_text(
        '{"mcpServers": {"x": {"command": "sh", "args": ["-c", "touch %s"]}}}' % ran
    )
    port = free_port()
    cmd = [charly_bin(), "-C", str(project), "mcp", "serve", "--listen", f"127.0.0.1:{port}"]

    async def go():
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (r, w, *_):
            async with ClientSession(r, w) as session:
                await session.initialize()
                for d in ["../newproj", str(tmp_path / "abs"), "link/inner"]:
                    result = await session.call_tool("box.new.project", {"dir": d})
                    assert result.is_error and "refusing path" in text(result), text(result)
                url = f"http://127.0.0.1:{port}/mcp"
                for junit in ["../junit.xml", str(tmp_path / "junit.xml"), "link/junit.xml"]:
                    (project / "plan.yml").write_text("p:\n  check: x\n  mcp: ping\n  context: [deploy]\n")
                    result = await session.call_tool("check.run", {"target": "plan.yml", "url": url, "junit": junit})
                    assert result.is_error and "refusing path" in text(result), text(result)
                for target in ["../plan.yml", str(tmp_path / "plan.yml")]:
                    result = await session.call_tool("check.validate", {"target": target})
                    assert result.is_error, text(result)
                # A fresh user's report: an .mcp.json outside the root ran its command.
                for mcp_json in [str(evil / ".mcp.json"), "../evil/.mcp.json", "link/../../evil/.mcp.json"]:
                    for tool in ["check.mcp.servers", "check.mcp.ping"]:
                        result = await session.call_tool(tool, {"mcp_json": mcp_json, "timeout": "3s"} if tool == "check.mcp.ping" else {"mcp_json": mcp_json})
                        assert result.is_error and "refusing path" in text(result), f"{tool} {mcp_json}: {text(result)}"
                # A fresh user's report: box.fetch cloned a repository from anywhere on the host.
                for spec in [str(evil), "file://" + str(evil), "../evil", "~"]:
                    result = await session.call_tool("box.fetch", {"spec": spec})
                    assert result.is_error and "local repository is outside the project root" in text(result), (
                        spec,
                        text(result),
                    )
                ok = await session.call_tool("box.new.project", {"dir": "sub"})
                assert not ok.is_error, text(ok)

    with running(cmd, port, env=clean_env(tmp_path)):
        asyncio.run(go())
    assert sorted(p.name for p in outside.iterdir()) == []
    assert not (tmp_path / "newproj").exists() and not (tmp_path / "abs").exists()
    assert not (tmp_path / "junit.xml").exists()
    assert not ran.exists(), "the command of an .mcp.json outside the project ran"
    assert (project / "sub" / "charly.yml").is_file()
    # New files get the usual permissions (0666 less the umask), not tempfile's 0600.
    assert (project / "sub" / "charly.yml").stat().st_mode & 0o044 == 0o044


def test_sample_project_is_fresh_for_each_server(tmp_path):
    cwd = tmp_path / "empty"
    cwd.mkdir()

    async def set_and_read(port, value):
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (r, w, *_):
            async with ClientSession(r, w) as session:
                await session.initialize()
                before = text(await session.call_tool("box.cat", {"path": "charly.yml"}))
                result = await session.call_tool("box.set", {"path": "hello.box.description", "value": value})
                assert not result.is_error, text(result)
                return before

    for value in ["first", "second"]:
        port = free_port()
        cmd = [charly_bin(), "mcp", "serve", "--listen", f"127.0.0.1:{port}"]
        with running(cmd, port, env=clean_env(tmp_path), cwd=cwd):
            before = asyncio.run(set_and_read(port, value))
        assert "first" not in before


def test_serve_flags_are_checked_before_serving(tmp_path):
    import subprocess

    def serve(*args):
        return subprocess.run([charly_bin(), *args], env=clean_env(tmp_path), capture_output=True, timeout=30)

    done = serve("mcp", "serve", "--path", "mcp", "--listen", f"127.0.0.1:{free_port()}")
    assert done.returncode == 2 and b"must start with `/`" in done.stderr, done.stderr
    # A fresh user's report: axum route syntax panicked or matched every path.
    for path in ["/{", "/*rest", "/{x}", "/a b", "/a?x=1", "/a#f"]:
        done = serve("mcp", "serve", "--path", path, "--listen", f"127.0.0.1:{free_port()}")
        assert done.returncode == 2 and b"must" in done.stderr and b"panicked" not in done.stderr, done.stderr
    done = serve("-C", str(tmp_path / "nope"), "mcp", "serve", "--listen", f"127.0.0.1:{free_port()}")
    assert done.returncode == 2 and b"does not exist" in done.stderr, done.stderr
    for host in ["http://example.com", "*", "", "exa mple", "example.com/"]:
        done = serve("mcp", "serve", "--allow-host", host, "--listen", f"127.0.0.1:{free_port()}")
        assert done.returncode == 2 and b"must be a host name" in done.stderr, (host, done.stderr)
    assert b"panicked" not in done.stderr
    # HTTP-only flags with --stdio are usage errors, not silently ignored.
    for flag in [["--listen", "127.0.0.1:1"], ["--path", "/x"], ["--allow-host", "example.com"]]:
        done = serve("mcp", "serve", "--stdio", *flag)
        assert done.returncode == 2 and b"cannot be used with" in done.stderr, (flag, done.stderr)


def test_allow_host_adds_a_host_and_its_origins(tmp_path):
    """A fresh user's report: off loopback every client got 403, with no flag to name the host."""
    import json
    import urllib.error
    import urllib.request

    port = free_port()
    cmd = [charly_bin(), "mcp", "serve", "--listen", f"127.0.0.1:{port}", "--allow-host", "charly.internal"]
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}

    def status(host, origin=None):
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream", "host": host}
        if origin:
            headers["origin"] = origin
        request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", json.dumps(init).encode(), headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as err:
            return err.code

    with running(cmd, port, env=clean_env(tmp_path)):
        assert status(f"charly.internal:{port}") == 200
        assert status(f"charly.internal:{port}", f"https://charly.internal:{port}") == 200
        assert status(f"localhost:{port}") == 200
        assert status(f"other.internal:{port}") == 403
        assert status(f"charly.internal:{port}", "https://evil.example") == 403


def test_bearer_token_from_env_or_file_guards_the_server(tmp_path):
    """A fresh user's report: `charly mcp serve --allow-host` served write tools to anyone."""
    import subprocess

    import httpx2

    token_file = tmp_path / "token"
    token_file.write_text("file-secret\n")
    env = {**clean_env(tmp_path), "CHARLY_TEST_TOKEN": "env-secret"}
    headers = {"accept": "application/json, text/event-stream"}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}

    async def go(url, token):
        async with httpx2.AsyncClient() as raw:
            assert (await raw.post(url, json=init, headers=headers)).status_code == 401
            wrong = {**headers, "authorization": "Bearer nope"}
            assert (await raw.post(url, json=init, headers=wrong)).status_code == 401
        async with httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}) as authed:
            async with streamable_http_client(url, http_client=authed) as (r, w, *_):
                async with ClientSession(r, w) as session:
                    await session.initialize()
                    assert "box.list.boxes" in [t.name for t in (await all_tools(session))]

    for flags, token in [(["--token-env", "CHARLY_TEST_TOKEN"], "env-secret"),
                         (["--token-file", str(token_file)], "file-secret")]:
        port = free_port()
        with running([charly_bin(), "mcp", "serve", "--listen", f"127.0.0.1:{port}", *flags], port, env=env):
            asyncio.run(go(f"http://127.0.0.1:{port}/mcp", token))

    # A token that cannot be read stops the server before it serves.
    done = subprocess.run([charly_bin(), "mcp", "serve", "--listen", f"127.0.0.1:{free_port()}",
                           "--token-env", "CHARLY_UNSET_TOKEN"], env=env, capture_output=True, timeout=30)
    assert done.returncode != 0 and b"CHARLY_UNSET_TOKEN" in done.stderr, done.stderr
    done = subprocess.run([charly_bin(), "mcp", "serve", "--stdio", "--token-env", "CHARLY_TEST_TOKEN"],
                          env=env, capture_output=True, timeout=30)
    assert done.returncode == 2 and b"cannot be used with" in done.stderr, done.stderr


# How it is shown (issue 11): a tool's result is the terminal's text plus the report's JSON.

SAMPLE = pathlib.Path(__file__).resolve().parents[2] / "charly-cli" / "assets" / "sample"
PLAN = "pinged:\n  check: the server answers ping\n  mcp: ping\n  context: [deploy]\n  stdout: \"ok\\n\"\n"


def write_sample(project: pathlib.Path) -> None:
    """The sample project, as `charly mcp serve` embeds it (charly-cli/assets/sample)."""
    import shutil

    shutil.copytree(SAMPLE, project)


def snapshot(project: pathlib.Path) -> tuple[frozenset, dict]:
    """The project's directories and files (path -> bytes)."""
    dirs = frozenset(str(p.relative_to(project)) for p in project.rglob("*") if p.is_dir())
    files = {str(p.relative_to(project)): p.read_bytes() for p in project.rglob("*") if p.is_file()}
    return dirs, files


def restore(project: pathlib.Path, state: tuple[frozenset, dict]) -> None:
    """Puts the project back as `state` was, at the same path (the server keeps serving it)."""
    import shutil

    for child in project.iterdir():
        shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    dirs, files = state
    for d in sorted(dirs):
        (project / d).mkdir(parents=True, exist_ok=True)
    for path, data in files.items():
        (project / path).write_bytes(data)


def terminal(args: list[str], env: dict) -> tuple[int, str, str]:
    """`charly <args>` as from a terminal: stdin and stderr on a pseudo-terminal, stdout captured.

    Returns the exit status, stdout, and what reached the terminal (stderr, `\\r\\n` as `\\n`).
    """
    import os
    import pty
    import subprocess
    import threading

    master, slave = pty.openpty()
    seen: list[bytes] = []

    def drain():
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: every writer has closed the terminal
                return
            if not data:
                return
            seen.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        done = subprocess.run([charly_bin(), *args], env=env, stdin=slave, stdout=subprocess.PIPE, stderr=slave,
                              timeout=60)
    finally:
        os.close(slave)
        reader.join(timeout=10)
        os.close(master)
    return done.returncode, done.stdout.decode(), b"".join(seen).decode().replace("\r\n", "\n")


async def same_as_terminal(session: ClientSession, project: pathlib.Path, env: dict, tool: str, args: dict,
                           argv: list[str]):
    """Calls `tool` and runs `charly argv` on an identical copy of the project: the project as it
    was before the call, restored at the same path (so paths in the text agree too). The call
    must succeed with structured content (the SDK has checked it against the tool's
    outputSchema), its first text block must be the terminal's stdout byte for byte, and both
    runs must leave the same files."""
    before = snapshot(project)
    result = await session.call_tool(tool, args)
    assert not result.is_error, f"{tool}: {text(result)}"
    assert result.structured_content is not None, tool
    assert result.content[0].type == "text", tool
    after = snapshot(project)
    restore(project, before)
    code, out, err = terminal(["-C", str(project), *argv], env)
    assert code == 0, (argv, out, err)
    if out.strip():
        assert result.content[0].text == out, f"{tool}: the tool's text and the terminal's stdout differ"
    else:
        # Nothing on the terminal: a client that reads only text gets the JSON instead.
        assert json.loads(result.content[0].text) == result.structured_content, tool
    assert snapshot(project) == after, f"{tool}: the call and the terminal left different files"
    return result


def test_results_carry_structured_content_and_the_terminals_text(tmp_path):
    project = tmp_path / "proj"
    write_sample(project)
    env = clean_env(tmp_path)
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    cmd = [charly_bin(), "-C", str(project), "mcp", "serve", "--listen", f"127.0.0.1:{port}"]
    mcp_json = '{"mcpServers": {"self": {"url": "%s"}}}\n' % url
    calls = [
        ("version", {}, ["version"]),
        ("doctor", {}, ["doctor"]),
        ("box.list.boxes", {}, ["box", "list", "boxes"]),
        ("box.list.candies", {}, ["box", "list", "candies"]),
        ("box.list.checks", {}, ["box", "list", "checks"]),
        ("box.validate", {}, ["box", "validate"]),
        ("box.inspect", {"box": "hello"}, ["box", "inspect", "hello"]),
        ("box.cat", {"path": "charly.yml"}, ["box", "cat", "charly.yml"]),
        ("box.set", {"path": "hello.box.description", "value": "a box"},
         ["box", "set", "hello.box.description", "a box"]),
        ("box.set", {"path": "hello.box.description", "value": "a box"},
         ["box", "set", "hello.box.description", "a box"]),
        ("box.write", {"path": "plan.yml", "content": PLAN}, ["box", "write", "plan.yml", "--content", PLAN]),
        ("box.write", {"path": ".mcp.json", "content": mcp_json},
         ["box", "write", ".mcp.json", "--content", mcp_json]),
        ("candy.add-rpm", {"name": "hello-svc", "packages": ["curl", "jq"]},
         ["candy", "add-rpm", "hello-svc", "curl", "jq"]),
        ("box.new.candy", {"name": "tools"}, ["box", "new", "candy", "tools"]),
        ("box.generate", {"box": "hello"}, ["box", "generate", "hello"]),
        ("box.cat", {"path": ".build/hello/Containerfile"}, ["box", "cat", ".build/hello/Containerfile"]),
        ("check.validate", {"target": "plan.yml"}, ["check", "validate", "plan.yml"]),
        ("check.validate", {"target": "hello"}, ["check", "validate", "hello"]),
        ("check.box", {"box": "hello"}, ["check", "box", "hello"]),
        ("check.mcp.servers", {}, ["check", "mcp", "servers"]),
        ("check.mcp.ping", {"url": url}, ["check", "mcp", "ping", "--url", url]),
        ("check.mcp.ping", {"server": "self"}, ["check", "mcp", "ping", "--server", "self"]),
        ("check.mcp.list-tools", {"url": url}, ["check", "mcp", "list-tools", "--url", url]),
        ("check.mcp.list-resources", {"url": url}, ["check", "mcp", "list-resources", "--url", url]),
        ("check.mcp.list-prompts", {"url": url}, ["check", "mcp", "list-prompts", "--url", url]),
        ("check.mcp.call", {"url": url, "tool": "version"}, ["check", "mcp", "call", "--tool", "version", "--url", url]),
        ("check.mcp.call", {"server": "self", "tool": "box.cat", "input": '{"path": "plan.yml"}'},
         ["check", "mcp", "call", "--tool", "box.cat", "--input", '{"path": "plan.yml"}', "--server", "self"]),
        ("check.mcp.read", {"url": url, "uri": "charly://project/charly.yml"},
         ["check", "mcp", "read", "--uri", "charly://project/charly.yml", "--url", url]),
    ]

    async def go():
        async with streamable_http_client(url) as (r, w, *_):
            async with ClientSession(r, w) as session:
                await session.initialize()
                tools = (await all_tools(session))
                no_schema = [t.name for t in tools if not t.output_schema]
                assert no_schema == [], f"tools without an outputSchema: {no_schema}"
                assert all(t.output_schema.get("type") == "object" for t in tools)
                called = {name for name, _, _ in calls}
                required = {"version", "doctor", "box.list.boxes", "box.list.candies", "box.list.checks",
                            "box.validate", "box.inspect", "box.cat", "box.set", "box.write", "candy.add-rpm",
                            "box.new.candy", "box.generate", "check.validate", "check.mcp.servers",
                            "check.mcp.ping", "check.mcp.list-tools", "check.mcp.call"}
                assert required <= called <= {t.name for t in tools}
                results = {}
                for name, args, argv in calls:
                    results[name] = await same_as_terminal(session, project, env, name, args, argv)
                # A few values, read from the JSON rather than the text.
                assert results["version"].structured_content["name"] == "charly"
                assert results["box.list.boxes"].structured_content == {"boxes": ["hello"]}
                assert results["check.mcp.servers"].structured_content == {
                    "servers": [{"name": "self", "url": url, "transport": "http"}]}
                inner = results["check.mcp.call"].structured_content
                assert inner["structuredContent"] == {"path": "plan.yml", "content": PLAN}, inner

                # An error: no report, so no structured content; the text names the file, as the
                # terminal's `charly: <message>` does.
                missing = await session.call_tool("box.cat", {"path": "missing.yml"})
                assert missing.is_error and missing.structured_content is None, missing
                assert "missing.yml" in text(missing), text(missing)
                code, out, err = terminal(["-C", str(project), "box", "cat", "missing.yml"], env)
                assert (code, out) == (2, ""), (code, out, err)
                assert err == f"charly: {text(missing)}\n", (err, text(missing))

                # A probed tool whose result is an error: the probe's report records a failure.
                probed = await session.call_tool(
                    "check.mcp.call", {"url": url, "tool": "box.cat", "input": '{"path": "missing.yml"}'})
                assert probed.is_error and probed.structured_content["isError"] is True, probed
                assert probed.content[-1].text == "exit status 1 (the tool's result is an error (isError: true))"
                code, out, err = terminal(["-C", str(project), "check", "mcp", "call", "--tool", "box.cat",
                                           "--input", '{"path": "missing.yml"}', "--url", url], env)
                assert code == 1 and out == probed.content[0].text, (code, out, err)

    with running(cmd, port, env=env):
        asyncio.run(go())


def test_a_failure_report_is_an_error_result_with_its_structured_content(tmp_path):
    import json

    import jsonschema

    project = tmp_path / "proj"
    project.mkdir()
    (project / "charly.yml").write_text("project:\n  version: 1\nweb:\n  box:\n    candy: [ghost]\n")
    env = clean_env(tmp_path)
    port = free_port()
    cmd = [charly_bin(), "-C", str(project), "mcp", "serve", "--listen", f"127.0.0.1:{port}"]

    async def go():
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (r, w, *_):
            async with ClientSession(r, w) as session:
                await session.initialize()
                tools = {t.name: t for t in (await all_tools(session))}
                result = await session.call_tool("box.validate", {})
                assert result.is_error, text(result)
                problems = result.structured_content["problems"]
                assert len(problems) >= 2, result.structured_content
                # The SDK validates only successful results: the failure report is checked here.
                jsonschema.validate(result.structured_content, tools["box.validate"].output_schema)
                assert [c.type for c in result.content] == ["text", "text"]
                assert result.content[-1].text == f"exit status 1 ({len(problems)} problem(s) found)"
                code, out, err = terminal(["-C", str(project), "box", "validate"], env)
                assert code == 1 and result.content[0].text == out, (code, out, err)
                assert err == f"charly: {len(problems)} problem(s) found\n", err
                code, out, err = terminal(["-C", str(project), "box", "validate", "--json"], env)
                assert code == 1 and json.loads(out) == result.structured_content, out

    with running(cmd, port, env=env):
        asyncio.run(go())


def test_empty_text_becomes_json_and_warnings_reach_the_client(tmp_path):
    """A result whose text would be empty (an unset password) carries its JSON as text, so a
    client that reads only text learns something; a warning a terminal prints on stderr (a
    config.yml entry no setting reads) is a text block of its own (trial 28, L6)."""
    project = tmp_path / "proj"
    write_sample(project)
    env = {**clean_env(tmp_path), "CHARLY_PROJECT_DIR": str(project), "CHARLY_SECRET_BACKEND": "config"}
    config = tmp_path / "home" / ".config" / "charly"
    config.mkdir(parents=True)
    (config / "config.yml").write_text("secrets:\n  kdbx_path: /nowhere.kdbx\n")
    (config / "config.yml").chmod(0o600)
    env.pop("XDG_CONFIG_HOME", None)
    params = StdioServerParameters(command=charly_bin(), args=["mcp", "serve", "--stdio"], env=env)

    async def go():
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as session:
                await session.initialize()
                result = await session.call_tool("settings.get", {"key": "vnc.password.hello"})
                assert not result.is_error, text(result)
                assert json.loads(result.content[0].text) == result.structured_content, text(result)
                warnings = [c.text for c in result.content[1:] if c.type == "text"]
                assert any(w.startswith("warning: ") and "`secrets:` is not a settings key" in w for w in warnings), warnings

    asyncio.run(go())
