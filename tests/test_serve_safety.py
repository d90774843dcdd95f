"""``lifecycle-tck serve`` refusing what it cannot use, with one clear line and no traceback."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

RUN_TIMEOUT = 60


def _serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", "serve", "--port", "0", *args], capture_output=True,
                          text=True, timeout=RUN_TIMEOUT, env=env if env is not None else os.environ.copy())


@pytest.mark.parametrize("content", [
    "apiVersion: v1\nkind: 5\nmetadata: {name: x}\n",
    "apiVersion: [v1]\nkind: ConfigMap\nmetadata: {name: x}\n",
    "- just\n- a list\n",
    "apiVersion: v1\nkind: List\nitems: [5]\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: 5\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [x]}\n",
    "{unclosed: [\n",
], ids=["kind-number", "apiversion-list", "not-an-object", "list-of-numbers", "metadata-number", "name-list",
        "bad-yaml"])
def test_a_malformed_fixture_stops_serve_with_one_line_naming_the_file(tmp_path: Path, content: str) -> None:
    fixture = tmp_path / "broken.yaml"
    fixture.write_text(content)
    result = _serve("--kubeconfig", str(tmp_path / "kc"), "--fixtures", str(fixture))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(fixture) in lines[0] and lines[0].startswith("lifecycle-tck serve: fixtures:")


def test_a_non_loopback_host_without_a_token_is_refused(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "LIFECYCLE_TCK_TOKEN"}
    result = _serve("--host", "0.0.0.0", "--kubeconfig", str(tmp_path / "kc"), env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "refusing to listen on 0.0.0.0 without a token" in result.stderr
    assert not (tmp_path / "kc").exists()


@pytest.mark.parametrize("args", [["--token", "a", "--token-file", "f"], ["--token-file", "/nonexistent/token"],
                                  ["--nodes", "-1"]], ids=["both-tokens", "missing-token-file", "negative-nodes"])
def test_unusable_security_options_are_usage_errors(tmp_path: Path, args: list[str]) -> None:
    result = _serve("--kubeconfig", str(tmp_path / "kc"), *args)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_the_default_state_directory_is_private_to_the_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.targets.serve import UsageError, default_state_dir, private_dir

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert default_state_dir() == tmp_path / "lifecycle-tck"
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert default_state_dir().name == f"lifecycle-tck-{os.getuid()}"
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    assert stat.S_IMODE(private_dir(shared).stat().st_mode) == 0o700
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "planted").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UsageError, match="not a directory"):
        private_dir(tmp_path / "planted")


def test_an_existing_serving_key_readable_by_others_is_rewritten_0600(tmp_path: Path) -> None:
    from harness.targets.serve import SERVING_KEY, tls_files

    key = tmp_path / SERVING_KEY
    key.write_text("old")
    key.chmod(0o644)
    tls_files(tmp_path, "127.0.0.1")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and "PRIVATE KEY" in key.read_text()
