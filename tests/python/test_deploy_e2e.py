"""Deploy mode end to end, driven entirely over MCP by the official Python SDK.

A `charly mcp serve` on the host (Streamable HTTP on 127.0.0.1) is asked, tool call by tool
call, to make a project with a Debian box (the mmdebstrap image `scripts/runtimes.sh` builds)
whose candy runs charly's own MCP server under supervisord, build it, `config.setup` it with a
project bound in, `start` it and `check.live` it with `filter: mcp` (ping, list-tools, call
version, call box.list.boxes against the server inside the container); then `stop` and
`remove` with `purge`, after which podman, the unit directory and the deploy file hold
nothing of it. The same case as charly-cli/tests/deploy/e2e.rs, from an MCP client.
"""
import asyncio
import json
import pathlib
import shutil
import subprocess

import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

from conftest import charly_bin, clean_env, free_port, running

DEBIAN = "localhost/charly-debian:latest"
BOX = "test-e2e-py"
CONTAINER = f"charly-{BOX}"

CANDY = """\
mcp:
  candy: {description: "charly's own MCP server, run by supervisord"}
mcp-svc:
  service:
    - {name: charly, command: "/opt/charly/charly -C /project mcp serve --listen 0.0.0.0:18765 --no-default-repo"}
mcp-port:
  port: [18765]
mcp-volume:
  volume: [{name: project, path: /project}, {name: bin, path: /opt/charly}]
mcp-provide:
  mcp_provide:
    - {name: charly, url: "http://{{.ContainerName}}:18765/mcp", transport: http}
mcp-ping:
  check: the server in the container answers ping
  mcp: ping
  context: [deploy]
  eventually: 60s
  retry_interval: 250ms
  stdout: "ok\\n"
mcp-tools:
  check: it lists its tools
  mcp: list-tools
  context: [deploy]
  stdout: {contains: "box.list.boxes\\t"}
mcp-version:
  check: call version
  mcp: call
  tool: version
  context: [deploy]
  stdout: {matches: "^charly \\\\d+\\\\.\\\\d+\\\\.\\\\d+"}
mcp-boxes:
  check: call box.list.boxes lists the bound project's boxes
  mcp: call
  tool: box.list.boxes
  context: [deploy]
  stdout: "alpha\\nbeta\\n"
"""


def podman(*args: str) -> list[str]:
    out = subprocess.run(["podman", *args], capture_output=True, text=True, check=True)
    return [line for line in out.stdout.splitlines() if line]


def leftovers(home: pathlib.Path) -> list[str]:
    left = podman("ps", "-a", "--filter", f"name=^{CONTAINER}$", "--format", "{{.Names}}")
    left += [v for v in podman("volume", "ls", "--format", "{{.Name}}") if v.startswith(f"{CONTAINER}-")]
    left += [s for s in podman("secret", "ls", "--format", "{{.Name}}") if s.startswith(CONTAINER)]
    units = home / ".config" / "containers" / "systemd"
    if units.is_dir():
        left += [str(p) for p in units.iterdir() if p.name.startswith(CONTAINER)]
    deploy = home / ".config" / "charly" / "charly.yml"
    if deploy.is_file() and f"{BOX}:" in deploy.read_text():
        left.append(f"deploy entry {BOX}: {deploy.read_text()}")
    return left


def cleanup() -> None:
    subprocess.run(["podman", "rm", "-f", "-t", "0", CONTAINER], capture_output=True)
    for v in ("bin", "project"):
        subprocess.run(["podman", "volume", "rm", "-f", f"{CONTAINER}-{v}"], capture_output=True)
    subprocess.run(["podman", "rmi", "-f", f"localhost/{BOX}:latest"], capture_output=True)
    subprocess.run(["podman", "image", "prune", "-f", "--filter", f"label=ai.opencharly.box={BOX}"], capture_output=True)


def text(result) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


def test_deploy_a_box_serving_charly_and_check_it_live_over_mcp(tmp_path):
    if shutil.which("podman") is None or subprocess.run(["podman", "image", "exists", DEBIAN]).returncode != 0:
        pytest.fail(f"podman with {DEBIAN} is needed: run scripts/runtimes.sh as root (it builds the image)")
    cleanup()
    project = tmp_path / "proj"
    project.mkdir()
    home = tmp_path / "home"
    (home / ".config" / "charly").mkdir(parents=True)
    # The binary served in the box is the one under test, bind-mounted (same glibc). Both bound
    # directories lie inside the served project: over MCP a bind names a directory there.
    bindir = project / "bin"
    bindir.mkdir()
    shutil.copy(charly_bin(), bindir / "charly")
    other = project / "other"
    other.mkdir()
    (other / "charly.yml").write_text(
        "project:\n  version: 1\nalpha:\n  box:\n    base: localhost/charly-busybox:latest\n"
        "beta:\n  box:\n    base: localhost/charly-busybox:latest\n"
    )
    host_port = free_port()
    port = free_port()
    cmd = [charly_bin(), "-C", str(project), "mcp", "serve", "--listen", f"127.0.0.1:{port}"]

    async def call(session: ClientSession, name: str, args: dict, ok: bool = True):
        result = await session.call_tool(name, args)
        if ok:
            assert not result.is_error, f"{name} {args}: {text(result)}"
        return result

    async def go():
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (r, w, *_):
            async with ClientSession(r, w) as session:
                await session.initialize()
                catalog, cursor = set(), None
                for _ in range(100):  # every page of the host server's catalog
                    page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
                    catalog |= {t.name for t in page.tools}
                    cursor = page.next_cursor
                    if not cursor:
                        break
                await call(session, "box.new.project", {"dir": "."})
                await call(session, "box.new.box", {"name": BOX, "base": DEBIAN})
                await call(session, "box.new.candy", {"name": "mcp"})
                await call(session, "box.write", {"path": "candy/mcp/charly.yml", "content": CANDY})
                await call(session, "box.add-candy", {"box": BOX, "candy": "mcp"})
                await call(session, "box.validate", {})
                await call(session, "box.build", {"box": BOX})
                setup = await call(session, "config.setup", {
                    "box": BOX,
                    "bind": ["project=other", "bin=bin"],
                    "port": [f"{host_port}:18765"],
                    "run_mode": "direct",
                })
                assert setup.structured_content["key"] == BOX, setup.structured_content
                started = await call(session, "start", {"box": BOX})
                assert started.structured_content["command"][0] == "supervisord", started.structured_content
                live = await session.call_tool("check.live", {"box": BOX, "filter": "mcp"})
                report = live.structured_content
                logs = text(await session.call_tool("logs", {"box": BOX}))
                verdicts = [(r["name"], r["verdict"]) for r in report["results"]]
                assert verdicts == [(n, "pass") for n in ("mcp-ping", "mcp-tools", "mcp-version", "mcp-boxes")], (
                    json.dumps(report, indent=1) + "\ncontainer logs:\n" + logs
                )
                assert not live.is_error, text(live)
                # The server in the box lists exactly the host server's catalog.
                listed = next(r for r in report["results"] if r["name"] == "mcp-tools")["stdout"]
                assert {line.split("\t")[0] for line in listed.splitlines()} == catalog
                await call(session, "stop", {"box": BOX})
                removed = await call(session, "remove", {"box": BOX, "purge": True})
                assert removed.structured_content["entry_removed"] is True, removed.structured_content

    try:
        with running(cmd, port, env=clean_env(tmp_path)):
            asyncio.run(go())
        assert leftovers(home) == []
        assert (other / "charly.yml").is_file() and (bindir / "charly").is_file()
    finally:
        cleanup()
