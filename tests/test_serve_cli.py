"""``lifecycle-tck serve`` as a user runs it: a process, a printed kubeconfig, kubectl, a signal."""

from __future__ import annotations

import base64
import os
import re
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

from tests.test_http_fixtures import KUBECTL

START_TIMEOUT = 20.0
STOP_TIMEOUT = 15.0

FIXTURE = """\
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {mode: test}
"""


def _start(args: list[str]) -> tuple[subprocess.Popen[str], str, Path]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + START_TIMEOUT
    lines: list[str] = []
    assert proc.stdout is not None
    while time.monotonic() < deadline and len(lines) < 2:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
    if len(lines) < 2:
        proc.kill()
        raise AssertionError(f"serve did not start: {lines} {proc.stderr.read() if proc.stderr else ''}")
    url = re.search(r"(https?://\S+)", lines[0]).group(1)  # type: ignore[union-attr]
    kubeconfig = Path(re.search(r"Kubeconfig: (\S+)", lines[1]).group(1))  # type: ignore[union-attr]
    return proc, url, kubeconfig


def _stop(proc: subprocess.Popen[str], sig: signal.Signals = signal.SIGTERM) -> int:
    proc.send_signal(sig)
    try:
        return proc.wait(STOP_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()


def _kubectl(kubeconfig: Path, cache: Path, *args: str) -> str:
    result = subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), "--cache-dir", str(cache), *args],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_serve_loads_fixtures_prints_a_kubeconfig_and_stops_cleanly(tmp_path: Path) -> None:
    fixture = tmp_path / "shop.yaml"
    fixture.write_text(FIXTURE)
    proc, url, kubeconfig = _start(["--kubeconfig", str(tmp_path / "kc"), "--fixtures", str(fixture)])
    try:
        assert url.startswith("https://127.0.0.1:")  # HTTPS by default, as kind and envtest serve
        assert kubeconfig == tmp_path / "kc"
        assert oct(kubeconfig.stat().st_mode & 0o777) == "0o600"
        out = _kubectl(kubeconfig, tmp_path / "cache", "get", "configmap", "settings", "-n", "shop",
                       "-o", "jsonpath={.data.mode}")
        assert out == "test"
    finally:
        code = _stop(proc)
    assert code == 0


def test_serve_rewrites_the_kubeconfig_when_a_workload_cluster_appears(tmp_path: Path) -> None:
    proc, _url, kubeconfig = _start(["--kubeconfig", str(tmp_path / "kc")])
    try:
        subprocess.run(
            [KUBECTL, "--kubeconfig", str(kubeconfig), "--cache-dir", str(tmp_path / "cache"), "apply", "-f", "-"],
            input="apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: wl1, namespace: default}\n",
            capture_output=True, text=True, timeout=60, check=True,
        )
        contexts = _kubectl(kubeconfig, tmp_path / "cache", "config", "get-contexts", "-o", "name").split()
        assert contexts == ["default/wl1", "management"]
        namespaces = _kubectl(kubeconfig, tmp_path / "cache", "--context", "default/wl1", "get", "ns", "-o", "name")
        assert "namespace/kube-system" in namespaces.split()
    finally:
        assert _stop(proc, signal.SIGINT) == 0


def test_serve_with_a_token_serves_tls_and_requires_the_token(tmp_path: Path) -> None:
    proc, url, kubeconfig = _start(["--kubeconfig", str(tmp_path / "kc"), "--token", "s3cret"])
    try:
        assert url.startswith("https://127.0.0.1:")
        config = yaml.safe_load(kubeconfig.read_text())
        ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"])
        (tmp_path / "ca.pem").write_bytes(ca)
        verify = ssl.create_default_context(cafile=str(tmp_path / "ca.pem"))
        assert httpx.get(f"{url}/api/v1/namespaces", timeout=5, verify=verify).status_code == 401
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{url}/api/v1/namespaces", timeout=5)  # not signed by a CA the system trusts
        assert config["users"][0]["user"]["token"] == "s3cret"
        assert "namespace/default" in _kubectl(kubeconfig, tmp_path / "cache", "get", "ns", "-o", "name").split()
    finally:
        _stop(proc)


@pytest.mark.parametrize(
    "args,code,message",
    [
        (["--controllers", "kubelet,nosuch"], 2, "unknown controller(s) nosuch"),
        (["--fixtures", "/nonexistent/objects.yaml"], 1, "fixtures: /nonexistent/objects.yaml"),
    ],
    ids=["unknown-controller", "missing-fixture"],
)
def test_serve_refuses_bad_arguments_with_a_clear_message(args: list[str], code: int, message: str) -> None:
    result = subprocess.run([sys.executable, "-m", "harness", "serve", "--port", "0", *args],
                            capture_output=True, text=True, timeout=30, env=os.environ.copy())
    assert result.returncode == code
    assert message in result.stderr


def test_a_client_from_the_kubeconfig_trusts_the_served_ca(tmp_path: Path) -> None:
    from harness.client.http import HttpClient

    proc, _url, kubeconfig = _start(["--kubeconfig", str(tmp_path / "kc"), "--token", "s3cret"])
    try:
        client = HttpClient.from_kubeconfig(kubeconfig.read_text())
        try:
            names = [ns["metadata"]["name"] for ns in client.list("v1", "Namespace")["items"]]
        finally:
            client.close()
        assert "kube-system" in names
    finally:
        _stop(proc)
