"""A JavaScript controller written with ``@kubernetes/client-node`` 1.x works against the kubeconfig a
real ``lifecycle-tck serve`` writes: list, watch, an informer, the four patch types and an eviction.

The npm project is ``tests/js`` (a pinned client, its ``package-lock.json``); ``npm ci`` installs it
once into a cache directory keyed by the lock file. Without Node.js the test is skipped, except in CI
(``CI`` set), where it fails: ``.ci/run`` installs Debian's ``nodejs`` and ``npm``."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_http_fixtures import ServeProcess, serve_process

JS_PROJECT = Path(__file__).parent / "js"
SCRIPT = "controller.mjs"
NPM_CI_TIMEOUT = 300.0
SCRIPT_TIMEOUT = 150.0
CHECKS = ("list", "watch", "informer", "json-patch", "merge-patch", "strategic-merge-patch",
          "server-side-apply", "eviction")


def _node_and_npm() -> tuple[str, str]:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        missing = "node" if node is None else "npm"
        if os.environ.get("CI"):
            pytest.fail(f"{missing} is missing in CI: .ci/run installs Debian's nodejs and npm")
        pytest.skip(f"{missing} is not installed (apt-get install nodejs npm)")
    return node, npm


@pytest.fixture(scope="module")
def js_project() -> tuple[str, Path]:
    """The npm project installed (``npm ci``, once per lock file) in the user's cache directory."""
    node, npm = _node_and_npm()
    lock = (JS_PROJECT / "package-lock.json").read_bytes()
    cache_root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    project = cache_root / "lifecycle-tck" / "js-client" / hashlib.sha256(lock).hexdigest()[:16]
    project.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json", SCRIPT):
        shutil.copyfile(JS_PROJECT / name, project / name)
    if not (project / "node_modules" / "@kubernetes" / "client-node").is_dir():
        installed = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=project, capture_output=True,
                                   text=True, timeout=NPM_CI_TIMEOUT, check=False)
        assert installed.returncode == 0, f"npm ci failed:\n{installed.stdout}\n{installed.stderr}"
    return node, project


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    yield from serve_process(tmp_path_factory.mktemp("serve"))


@pytest.fixture(scope="module")
def checks(js_project: tuple[str, Path], served: ServeProcess) -> dict[str, dict[str, object]]:
    """Each check the script printed, by name."""
    node, project = js_project
    environment = {**os.environ, "KUBECONFIG": str(served.kubeconfig)}
    ran = subprocess.run([node, SCRIPT], cwd=project, env=environment, capture_output=True, text=True,
                         timeout=SCRIPT_TIMEOUT, check=False)
    lines = [json.loads(line) for line in ran.stdout.splitlines() if line.startswith("{")]
    assert ran.returncode == 0, f"the script failed ({ran.returncode}):\n{ran.stdout}\n{ran.stderr}"
    return {line["check"]: line for line in lines}


def test_the_script_ran_every_check(checks: dict[str, dict[str, object]]) -> None:
    assert sorted(checks) == sorted(CHECKS)


@pytest.mark.parametrize("name", CHECKS)
def test_a_client_node_controller_check_passes(checks: dict[str, dict[str, object]], name: str) -> None:
    assert name in checks, f"the script never reported {name}"
    assert checks[name]["ok"] is True, checks[name]["detail"]


def test_the_informer_saw_add_update_and_delete(checks: dict[str, dict[str, object]]) -> None:
    detail = checks["informer"]["detail"]
    assert isinstance(detail, dict)
    assert detail["events"] == ["add informed", "update informed 2", "delete informed"]


def test_server_side_apply_conflicted_then_forced(checks: dict[str, dict[str, object]]) -> None:
    detail = checks["server-side-apply"]["detail"]
    assert isinstance(detail, dict)
    assert detail["conflict"] == 409 and detail["data"] == {"owned": "theirs"}
