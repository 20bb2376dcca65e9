"""Three replicas of the real `charly mcp serve` behind Debian's nginx, with the repository's
own config (deploy/nginx/charly.conf.template), all on 127.0.0.1.

- stateless (`--stateless`): round robin, every replica serves a share of the calls (counted
  from nginx's access log, which names the replica that answered each request);
- stateful (`--replica charly-N`): many sessions, every call succeeds, and every request of a
  session reaches the replica that minted its id;
- a replica killed: its sessions' next request gets 404 through nginx (not 502), the other
  sessions go on, and new sessions work.

nginx and the replicas are stopped by pid at the end of each test.
"""
import asyncio
import contextlib
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import urllib.error
import urllib.request

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from conftest import ROOT, charly_bin, clean_env, free_port, wait_for_port

TEMPLATE = ROOT / "deploy" / "nginx" / "charly.conf.template"
REPLICAS = 3


def nginx_bin() -> str:
    path = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(path):
        pytest.fail("nginx is missing: run scripts/runtimes.sh as root (apt-get install nginx)")
    return path


@contextlib.contextmanager
def started(cmd: list[str], port: int, log: pathlib.Path, **kwargs):
    """Starts `cmd` (stderr to `log`), waits for `port`, yields the process; always stops it by pid."""
    with open(log, "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, **kwargs)
    try:
        try:
            wait_for_port(port, proc)
        except Exception:
            raise RuntimeError(f"{cmd[0]} did not start: {log.read_text()}")
        yield proc
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()


class Cluster:
    def __init__(self, tmp: pathlib.Path, ports: list[int], procs: list[subprocess.Popen], nginx_port: int):
        self.tmp, self.ports, self.procs = tmp, ports, procs
        self.url = f"http://127.0.0.1:{nginx_port}/mcp"
        self.access_log = tmp / "nginx" / "logs" / "access.log"

    def log_lines(self) -> list[dict]:
        """nginx's access log: one dict per request (request, status, upstream, session)."""
        pattern = re.compile(
            r'"(?P<request>[^"]*)" (?P<status>\d+) upstream=(?P<upstream>\S*) '
            r"upstream_status=(?P<upstream_status>\S*) session=(?P<session>\S*)"
        )
        return [m.groupdict() for m in map(pattern.search, self.access_log.read_text().splitlines()) if m]

    def replica_of(self, upstream: str) -> int:
        """The replica index of an upstream address (the last one tried, when nginx tried several)."""
        return self.ports.index(int(upstream.split(",")[-1].strip().rsplit(":", 1)[1]))


@contextlib.contextmanager
def cluster(tmp: pathlib.Path, mode: str):
    """Three replicas (`stateless` or `stateful`) on free ports and nginx in front of them."""
    nginx = nginx_bin()
    project = tmp / "proj"
    project.mkdir()
    ports = [free_port() for _ in range(REPLICAS)]
    nginx_port = free_port()
    env = clean_env(tmp)
    with contextlib.ExitStack() as stack:
        procs = []
        for i, port in enumerate(ports):
            flags = ["--stateless"] if mode == "stateless" else ["--replica", f"charly-{i}"]
            cmd = [charly_bin(), "-C", str(project), "mcp", "serve", "--listen", f"127.0.0.1:{port}", *flags]
            procs.append(stack.enter_context(started(cmd, port, tmp / f"replica-{i}.log", env=env)))
        prefix = tmp / "nginx"
        for sub in ("logs", "tmp"):
            (prefix / sub).mkdir(parents=True)
        conf = TEMPLATE.read_text().replace("@LISTEN@", f"127.0.0.1:{nginx_port}")
        for i, port in enumerate(ports):
            conf = conf.replace(f"@REPLICA_{i}@", f"127.0.0.1:{port}")
        assert "@" not in "".join(line for line in conf.splitlines() if not line.lstrip().startswith("#"))
        (prefix / "charly.conf").write_text(conf)
        cmd = [nginx, "-p", str(prefix), "-c", str(prefix / "charly.conf"), "-g", "daemon off;"]
        stack.enter_context(started(cmd, nginx_port, tmp / "nginx.log"))
        yield Cluster(tmp, ports, procs, nginx_port)


def post(url: str, message: dict, session: str | None = None) -> tuple[int, dict, str]:
    """One raw JSON-RPC POST: (status, headers, body)."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-11-25"}
    if session:
        headers["mcp-session-id"] = session
    request = urllib.request.Request(url, data=json.dumps(message).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}


def raw_session(url: str) -> str:
    status, headers, body = post(url, INIT)
    assert status == 200, (status, body)
    session = {k.lower(): v for k, v in headers.items()}["mcp-session-id"]
    status, _, body = post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    assert status == 202, (status, body)
    return session


def ping(url: str, session: str) -> int:
    return post(url, {"jsonrpc": "2.0", "id": 9, "method": "ping"}, session)[0]


async def calls_in_one_session(url: str, calls: int) -> str | None:
    async with streamable_http_client(url) as (read, write, *_):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for _ in range(calls):
                result = await session.call_tool("version", {})
                assert not result.is_error, result
                assert result.content[0].text.startswith("charly ")
            tools = await session.list_tools()
            assert any(t.name == "version" for t in tools.tools)
            return None


def test_stateless_replicas_share_the_calls_round_robin(tmp_path):
    calls = 30
    with cluster(tmp_path, "stateless") as c:
        asyncio.run(calls_in_one_session(c.url, calls))
        served = [0] * REPLICAS
        for line in c.log_lines():
            if line["request"].startswith("POST /mcp") and line["status"] == "200":
                served[c.replica_of(line["upstream"])] += 1
        # initialize, the calls and tools/list (the SDK lists tools on its own too, to check
        # structured results): round robin gives each replica about a third.
        assert sum(served) >= calls + 2, served
        assert all(n >= sum(served) // REPLICAS - 2 for n in served), served
        print(f"stateless: {sum(served)} POSTs, served per replica: {served}")


def test_stateful_sessions_stick_to_their_replica(tmp_path):
    sessions, calls = 12, 5
    with cluster(tmp_path, "stateful") as c:

        async def many():
            await asyncio.gather(*(calls_in_one_session(c.url, calls) for _ in range(sessions)))

        asyncio.run(many())
        minted, routed = set(), 0
        for line in c.log_lines():
            if not line["session"] or line["session"] == "-":
                continue
            replica, _ = line["session"].split(".", 1)
            minted.add(replica)
            # Every request of a session went to the replica named in its id, and succeeded.
            assert c.replica_of(line["upstream"]) == int(replica.removeprefix("charly-")), line
            assert line["status"] in ("200", "202"), line
            routed += 1
        assert minted == {f"charly-{i}" for i in range(REPLICAS)}, minted
        assert routed >= sessions * (calls + 2), routed
        print(f"stateful: {sessions} sessions on {sorted(minted)}, {routed} requests routed by session id")


def test_a_dead_replicas_sessions_get_404_and_start_anew(tmp_path):
    with cluster(tmp_path, "stateful") as c:
        # Round robin: three sessions land on three replicas.
        by_replica = {}
        for _ in range(REPLICAS * 2):
            session = raw_session(c.url)
            by_replica.setdefault(session.split(".", 1)[0], session)
        assert set(by_replica) == {f"charly-{i}" for i in range(REPLICAS)}, by_replica
        for session in by_replica.values():
            assert ping(c.url, session) == 200
        dead = c.procs[1]
        os.kill(dead.pid, signal.SIGKILL)
        dead.wait()
        # The dead replica's session: 404 (a backup replica does not know it), never 502.
        for _ in range(3):
            assert ping(c.url, by_replica["charly-1"]) == 404
        # The others' sessions are untouched.
        assert ping(c.url, by_replica["charly-0"]) == 200
        assert ping(c.url, by_replica["charly-2"]) == 200
        # New sessions (what the client does after the 404) work, on the live replicas only.
        for _ in range(REPLICAS * 2):
            session = raw_session(c.url)
            assert session.split(".", 1)[0] in ("charly-0", "charly-2"), session
            assert ping(c.url, session) == 200
        asyncio.run(calls_in_one_session(c.url, 3))
        statuses = {line["status"] for line in c.log_lines()}
        assert "502" not in statuses and "504" not in statuses, statuses


@pytest.mark.parametrize(
    "flags, says",
    [
        (["--replica", "a.b"], "--replica: the replica name \"a.b\" must be 1 to 63 ASCII letters"),
        (["--health-path", "/mcp"], "--health-path \"/mcp\" is the MCP endpoint's --path"),
        (["--health-path", "healthz"], "--health-path: the endpoint path \"healthz\" must start with `/`"),
        (["--replica", "charly-0", "--stateless"], "cannot be used with"),
    ],
)
def test_bad_scale_out_flags_are_refused_before_serving(tmp_path, flags, says):
    port = free_port()
    cmd = [charly_bin(), "-C", str(tmp_path), "mcp", "serve", "--listen", f"127.0.0.1:{port}", *flags]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=30, env=clean_env(tmp_path))
    assert run.returncode == 2 and says in run.stderr, run.stderr
