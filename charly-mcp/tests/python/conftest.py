"""Fixtures for the Python-SDK tests of the server framework.

They drive `charly-mcp/examples/cli_server.rs` (a derived clap catalog behind an async
runner) with the official `mcp` SDK. Build the example first, then run pytest from the
venv scripts/peers.sh installs:

    cargo build -p charly-mcp --example cli_server
    .peers/venv/bin/python -m pytest charly-mcp/tests/python

The binary is looked up in $CARGO_TARGET_DIR (default target/) or taken from $CLI_SERVER_BIN.
Servers listen on 127.0.0.1 free ports and are stopped by each test.
"""
import contextlib
import os
import pathlib
import socket
import subprocess
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]


def server_bin() -> str:
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    path = os.environ.get("CLI_SERVER_BIN") or str(target / "debug" / "examples" / "cli_server")
    if not os.path.exists(path):
        pytest.fail(f"{path} is missing: cargo build -p charly-mcp --example cli_server")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def http_server(*flags: str, env: dict | None = None):
    """Starts the example on a free port with `flags`; yields its /mcp URL; always stops it."""
    port = free_port()
    proc = subprocess.Popen(
        [server_bin(), "--listen", f"127.0.0.1:{port}", *flags],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode}: {proc.stderr.read().decode()}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listening on 127.0.0.1:{port}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
