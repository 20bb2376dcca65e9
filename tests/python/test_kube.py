"""deploy/kube/charly.yaml run for real with `podman kube play`, in the image
deploy/kube/build-image.sh builds (FROM scratch: the binary and its shared libraries).

podman 4.3.1 turns the Deployment's `replicas: 3` into three pods, `<name>-pod-0..2`. A
published port in the template would be bound once per pod, as a hostPort on one Kubernetes
node, and only the first pod could start; so the test plays the manifest twice:

1. as it is (3 replicas): each pod ready, its health endpoint answering as the kubelet's probe
   does (an HTTP GET from outside the container to the pod's address), a tools/list on each;
2. with `replicas: 1` and a port published on 127.0.0.1 (`hostIP`, `hostPort`): the pod reached on that published loopback
   port with charly's own client (`charly check mcp list-tools --url`).

Each play ends with `podman kube down`. Names are `charly-test-kube-*`.
"""
import json
import os
import pathlib
import shutil
import subprocess
import time
import urllib.request

import pytest

from conftest import ROOT, charly_bin, free_port

MANIFEST = ROOT / "deploy" / "kube" / "charly.yaml"
BUILD = ROOT / "deploy" / "kube" / "build-image.sh"
NAME = "charly-test-kube"
PODMAN_CONF = """[containers]
default_ulimits = []
[engine]
runtime = "runc"
events_logger = "file"
"""


def podman(env: dict, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", *args], env=env, capture_output=True, text=True, timeout=120, check=check)


@pytest.fixture
def podman_env(tmp_path):
    if not shutil.which("podman"):
        pytest.fail("podman is missing: run scripts/runtimes.sh as root (podman runc catatonit ...)")
    # RUNTIMES.md §1: runc, and no forced ulimits (no CAP_SYS_RESOURCE here).
    conf = tmp_path / "containers.conf"
    conf.write_text(PODMAN_CONF)
    return {**os.environ, "CONTAINERS_CONF": str(conf)}


def build_image(env: dict) -> tuple[str, float]:
    start = time.monotonic()
    built = subprocess.run([str(BUILD), charly_bin()], env=env, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    return built.stdout.strip().splitlines()[-1], time.monotonic() - start


def render(image: str, replicas: int, host_port: int | None = None) -> str:
    text = MANIFEST.read_text().replace("charly-mcp", NAME).replace(f"localhost/{NAME}:latest", image)
    text = text.replace("  replicas: 3\n", f"  replicas: {replicas}\n")
    if host_port:
        text = text.replace(
            "          imagePullPolicy: Never\n",
            "          imagePullPolicy: Never\n          ports:\n            - containerPort: 18765\n"
            f"              hostIP: 127.0.0.1\n              hostPort: {host_port}\n",
        )
    assert image in text and (host_port is None or str(host_port) in text)
    return text


def post(url: str, message: dict, host: str) -> tuple[int, str]:
    request = urllib.request.Request(
        url, data=json.dumps(message).encode(), method="POST",
        headers={"content-type": "application/json", "accept": "application/json, text/event-stream",
                 "mcp-protocol-version": "2025-11-25", "host": host})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read().decode()


def wait_healthy(url: str, timeout: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return {"status": response.status, "body": response.read().decode()}
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


class Played:
    """`podman kube play` of a rendered manifest; `podman kube down` on exit."""

    def __init__(self, env: dict, path: pathlib.Path):
        self.env, self.path = env, path

    def __enter__(self):
        podman(self.env, "kube", "down", str(self.path), check=False)
        played = podman(self.env, "kube", "play", str(self.path), check=False)
        if played.returncode != 0:
            self.__exit__()
            pytest.fail(f"podman kube play failed: {played.stderr}{played.stdout}")
        return self

    def __exit__(self, *exc):
        down = podman(self.env, "kube", "down", str(self.path), check=False)
        assert down.returncode == 0, down.stderr


def pod_ip(env: dict, pod: str) -> str:
    infra = podman(env, "pod", "inspect", pod, "--format", "{{.InfraContainerID}}").stdout.strip()
    networks = json.loads(podman(env, "inspect", infra, "--format", "{{json .NetworkSettings.Networks}}").stdout)
    return next(iter(networks.values()))["IPAddress"]


def test_build_removes_no_other_image(tmp_path, podman_env):
    """Another checkout's (or user's) localhost/charly-mcp:<hash> survives a build of a new
    binary: the script removes nothing it did not build."""
    other = "localhost/charly-mcp:0ther0ther00"
    fresh = tmp_path / "charly"
    # A binary of its own hash: charly's bytes and a trailer (ldd reads it as charly).
    fresh.write_bytes(pathlib.Path(charly_bin()).read_bytes() + os.urandom(16))
    fresh.chmod(0o755)
    first = image = None
    try:
        first, _ = build_image(podman_env)
        podman(podman_env, "tag", first, other)
        built = subprocess.run([str(BUILD), str(fresh)], env=podman_env, capture_output=True, text=True, timeout=300)
        assert built.returncode == 0, built.stderr
        image = built.stdout.strip().splitlines()[-1]
        assert image != first
        assert podman(podman_env, "image", "exists", other, check=False).returncode == 0, "the other image was removed"
        assert podman(podman_env, "image", "exists", first, check=False).returncode == 0, "the earlier image was removed"
    finally:
        podman(podman_env, "untag", other, other, check=False)
        if first:  # :latest back on the image of the real binary
            podman(podman_env, "tag", first, "localhost/charly-mcp:latest", check=False)
        if image and image != first:
            podman(podman_env, "rmi", image, check=False)


def test_kube_play_three_replicas_then_one_on_loopback(tmp_path, podman_env):
    image, first = build_image(podman_env)
    _, second = build_image(podman_env)
    assert second < 5, f"a second build of the same binary took {second:.1f}s: the cache did not hit"
    print(f"image {image}: built in {first:.1f}s, cached in {second:.2f}s")

    three = tmp_path / "three.yaml"
    three.write_text(render(image, 3))
    with Played(podman_env, three):
        pods = [f"{NAME}-pod-{i}" for i in range(3)]
        listed = podman(podman_env, "pod", "ps", "--format", "{{.Name}} {{.Status}}").stdout
        for pod in pods:
            assert f"{pod} Running" in listed, listed
            base = f"http://{pod_ip(podman_env, pod)}:18765"
            # What the kubelet's httpGet probe does: GET from outside the container.
            assert wait_healthy(f"{base}/healthz") == {"status": 200, "body": '{"status":"ok"}'}
            # By the Service's name, as a client in the cluster would (`--allow-host`); the
            # pod's own address is not an accepted Host.
            status, body = post(f"{base}/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, NAME)
            assert status == 200 and '"name":"version"' in body, body
            # --read-only: no destructive tool is listed.
            assert '"name":"box.new.project"' not in body
        # podman's own translation of the httpGet probe runs curl inside the container.
        check = podman(podman_env, "inspect", f"{pods[0]}-charly", "--format", "{{json .Config.Healthcheck}}")
        print(f"podman's healthcheck from the probe: {check.stdout.strip()}")

    port = free_port()
    one = tmp_path / "one.yaml"
    one.write_text(render(image, 1, port))
    with Played(podman_env, one):
        url = f"http://127.0.0.1:{port}"
        assert wait_healthy(f"{url}/healthz")["status"] == 200
        listed = subprocess.run([charly_bin(), "check", "mcp", "list-tools", "--url", f"{url}/mcp"],
                                capture_output=True, text=True, timeout=60)
        assert listed.returncode == 0, listed.stderr
        assert any(line.startswith("version\t") for line in listed.stdout.splitlines()), listed.stdout
    assert NAME not in podman(podman_env, "pod", "ps", "--format", "{{.Name}}").stdout
