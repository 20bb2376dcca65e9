"""Fixtures for the Python-SDK tests: real processes on 127.0.0.1, free ports, stopped by the test.

Binaries come from the one `cargo test` build (target/debug), overridable with CHARLY_BIN.
"""
import contextlib
import os
import pathlib
import socket
import subprocess
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))


def charly_bin() -> str:
    path = os.environ.get("CHARLY_BIN") or str(TARGET / "debug" / "charly")
    if not os.path.exists(path):
        pytest.fail(f"{path} is missing: build it first (cargo build -p charly-cli, or bash scripts/test)")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early with {proc.returncode}: {proc.stderr.read().decode()}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port} after {timeout}s")


@contextlib.contextmanager
def running(cmd: list[str], port: int, **kwargs):
    """Starts `cmd`, waits for `port`, yields the process, and always stops it."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kwargs)
    try:
        wait_for_port(port, proc)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def clean_env(tmp: pathlib.Path) -> dict:
    """An environment with no project named and caches inside the test's own directory."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHARLY_")}
    env["CHARLY_REPO_CACHE"] = str(tmp / "cache" / "repos")
    env["HOME"] = str(tmp / "home")
    return env
