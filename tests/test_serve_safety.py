"""``lifecycle-tck serve`` refusing what it cannot use, with one clear line and no traceback."""

from __future__ import annotations

import os
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

