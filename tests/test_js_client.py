"""A JavaScript controller written with ``@kubernetes/client-node`` 1.x works against the kubeconfig a
real ``lifecycle-tck serve`` writes: list, watch, an informer, the four patch types and an eviction.

The npm project is ``tests/js`` (a pinned client, its ``package-lock.json``); ``npm ci`` installs it
once into a cache directory keyed by the lock file (``$XDG_CACHE_HOME`` or ``~/.cache``,
``lifecycle-tck/js-client/``). One test runs every check, so parallel workers start one server.
Without Node.js the test is skipped, except in CI (``CI`` set), where it fails: ``.ci/run``
installs Debian's ``nodejs`` and ``npm``."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
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


def _installed(npm: str) -> Path:
    """The npm project installed (``npm ci``) in the user's cache directory, once per lock file.
    It is installed beside its final place and renamed into it, so parallel test workers never see
    half an install."""
    lock = (JS_PROJECT / "package-lock.json").read_bytes()
    cache_root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    project = cache_root / "lifecycle-tck" / "js-client" / hashlib.sha256(lock).hexdigest()[:16]
    if (project / "node_modules" / "@kubernetes" / "client-node").is_dir():
        return project
    project.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=project.name + ".", dir=project.parent))
    try:
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(JS_PROJECT / name, staging / name)
        installed = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=staging, capture_output=True,
                                   text=True, timeout=NPM_CI_TIMEOUT, check=False)
        assert installed.returncode == 0, f"npm ci failed:\n{installed.stdout}\n{installed.stderr}"
        with contextlib.suppress(OSError):  # another worker renamed its install first: use that one
            staging.rename(project)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return project


@pytest.fixture
def node_and_npm() -> tuple[str, str]:
    """``node`` and ``npm``, checked before a server starts."""
    return _node_and_npm()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServeProcess]:
    yield from serve_process(tmp_path)


def test_a_client_node_controller_works_against_serve(
    node_and_npm: tuple[str, str], served: ServeProcess, tmp_path: Path
) -> None:
    node, npm = node_and_npm
    project = _installed(npm)
    # The script runs from its own directory, finding the installed client through node_modules.
    run_dir = tmp_path / "js"
    run_dir.mkdir()
    shutil.copyfile(JS_PROJECT / SCRIPT, run_dir / SCRIPT)
    shutil.copyfile(JS_PROJECT / "package.json", run_dir / "package.json")
    (run_dir / "node_modules").symlink_to(project / "node_modules", target_is_directory=True)
    environment = {**os.environ, "KUBECONFIG": str(served.kubeconfig)}
    ran = subprocess.run([node, SCRIPT], cwd=run_dir, env=environment, capture_output=True, text=True,
                         timeout=SCRIPT_TIMEOUT, check=False)
    assert ran.returncode == 0, f"the script failed ({ran.returncode}):\n{ran.stdout}\n{ran.stderr}"
    checks = {line["check"]: line for line in map(json.loads, ran.stdout.splitlines())}
    assert sorted(checks) == sorted(CHECKS)
    failed = {name: check["detail"] for name, check in checks.items() if check["ok"] is not True}
    assert not failed, f"client-node checks failed: {failed}"
    assert checks["informer"]["detail"]["events"] == ["add informed", "update informed 2", "delete informed"]
    applied = checks["server-side-apply"]["detail"]
    assert applied["conflict"] == 409 and applied["data"] == {"owned": "theirs"}
    assert "js-other/Apply" in applied["managers"]
