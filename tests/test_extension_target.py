"""``lifecycle-tck conformance --target extension``: the minimal example extension (examples/extension_minimal)
passes the ``runtime_extension`` profile and only it runs; its deliberately broken variants fail for the
reason they are broken; a URL that refuses connections, a wrong CA or garbage from discovery give a clear
verdict in bounded time and leave no process; missing or bad options are a usage error."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from test_http_fixtures import stop_process

from harness.apiserver.http.certificates import make_ca
from harness.kube.names.runtime_sdk import CATALOG
from harness.targets.extension import check_extension_options, response_problems

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "extension_minimal" / "extension.py"
PYTHON = sys.executable
# A whole run of the profile takes about 20 s; a hung one is cut off well before CI's limit.
RUN_TIMEOUT = 300
# A run against an extension that is not there, or not trusted, ends quickly: every call fails at once.
BAD_INPUT_SECONDS = 120
START_SECONDS = 30
AREA = "runtime_extension"
SCENARIOS = 9


@contextmanager
def example_extension(cert_dir: Path, *flags: str) -> Iterator[str]:
    """The example extension as a process; its URL. It is killed (bounded) when the block ends."""
    process = subprocess.Popen([PYTHON, str(EXAMPLE), "--cert-dir", str(cert_dir), *flags], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        url: list[str] = []

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                if line.startswith("Runtime Extension: "):
                    url.append(line.split()[-1])
            # keep draining so the process never blocks on a full pipe

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        deadline = time.monotonic() + START_SECONDS
        while not url:
            assert process.poll() is None, f"the example extension ended with {process.returncode}"
            assert time.monotonic() < deadline, "the example extension did not print its URL"
            threading.Event().wait(0.05)
        yield url[0]
    finally:
        stop_process(process, 10)


def _conformance(url: str | None, ca_file: Path | str | None, report_dir: Path | None = None,
                 *extra: str) -> subprocess.CompletedProcess[str]:
    args = [PYTHON, "-m", "harness", "conformance", "--target", "extension"]
    if url is not None:
        args += ["--extension-url", url]
    if ca_file is not None:
        args += ["--ca-file", str(ca_file)]
    if report_dir is not None:
        args += ["--report-dir", str(report_dir)]
    return subprocess.run([*args, *extra], cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def _summary(run: subprocess.CompletedProcess[str]) -> str:
    return run.stdout[run.stdout.find("Lifecycle TCK conformance"):]


def _results(report_dir: Path) -> list[dict]:  # type: ignore[type-arg]
    return list(yaml.safe_load((report_dir / "conformance-results.yaml").read_text())["scenarios"])


def _failed(report_dir: Path) -> dict[str, str]:
    """Failed scenarios of the area: name -> reason."""
    return {r["name"]: r["reason"] for r in _results(report_dir) if r["area"] == AREA and r["status"] == "failed"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _processes_naming(text: str) -> list[str]:
    """Command lines of running processes that mention ``text``."""
    out = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            out.append(cmdline)
    return out


# -- options and unit checks ----------------------------------------------------------------------------------


def test_the_options_are_checked_before_anything_runs(tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_bytes(make_ca("test").cert_pem)
    assert check_extension_options(None, str(ca)) == "--target extension needs --extension-url URL and --ca-file FILE"
    assert "over https" in (check_extension_options("http://127.0.0.1:1", str(ca)) or "")
    assert "cannot read it" in (check_extension_options("https://127.0.0.1:1", str(tmp_path / "nope")) or "")
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("hello")
    assert "no PEM certificate" in (check_extension_options("https://127.0.0.1:1", str(not_pem)) or "")
    assert check_extension_options("https://127.0.0.1:1", str(ca)) is None


@pytest.mark.parametrize("argv", [["--extension-url", "https://127.0.0.1:1"], ["--ca-file", "ca.crt"]])
def test_a_missing_option_is_a_usage_error_with_a_message(argv: list[str]) -> None:
    run = subprocess.run([PYTHON, "-m", "harness", "conformance", "--target", "extension", *argv], cwd=ROOT,
                         capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 2
    assert "--target extension needs --extension-url URL and --ca-file FILE" in run.stderr


@pytest.mark.parametrize(("hook", "response", "problem"), [
    ("AfterControlPlaneInitialized", {"status": "Success", "retryAfterSeconds": 30},
     "has retryAfterSeconds 30 on AfterControlPlaneInitialized, which cannot block"),
    ("BeforeClusterCreate", {"status": "Success", "retryAfterSeconds": -1}, "has retryAfterSeconds -1"),
    ("BeforeClusterCreate", {"status": "Success", "retryAfterSeconds": "5"}, 'has retryAfterSeconds "5"'),
    ("BeforeClusterDelete", {"status": "Maybe"}, 'has the status "Maybe"'),
    ("BeforeClusterDelete", {"message": "hi"}, "has no status"),
    ("BeforeClusterDelete", {"status": "Success", "kind": "BeforeClusterCreateResponse"},
     'has the kind "BeforeClusterCreateResponse", not BeforeClusterDeleteResponse'),
])
def test_a_wrong_answer_is_named(hook: str, response: dict, problem: str) -> None:  # type: ignore[type-arg]
    assert any(problem in p for p in response_problems(CATALOG[hook], response)), response_problems(
        CATALOG[hook], response)


def test_a_right_answer_has_no_problem() -> None:
    assert response_problems(CATALOG["BeforeClusterCreate"], {"status": "Success", "retryAfterSeconds": 5,
                                                              "message": "wait"}) == []
    assert response_problems(CATALOG["AfterClusterUpgrade"], {"status": "Failure", "message": "no"}) == []


# -- verdicts -------------------------------------------------------------------------------------------------


def test_the_minimal_example_extension_passes_and_only_its_profile_runs(tmp_path: Path) -> None:
    with example_extension(tmp_path / "certs") as url:
        run = _conformance(url, tmp_path / "certs" / "ca.crt", tmp_path / "report")
    # It registers no AfterControlPlaneUpgrade handler: the upgrade scenario cannot check it, so it did not
    # run, and the verdict is INCOMPLETE (exit 3), saying why; everything else passes.
    summary = _summary(run)
    assert run.returncode == 3, run.stdout[-6000:] + run.stderr[-3000:]
    assert f"{SCENARIOS - 1} passed, 0 failed, 0 skipped, 1 did not run" in summary
    assert "Verdict: INCOMPLETE — runtime_extension INCOMPLETE" in summary
    assert "the extension registers no handler for AfterControlPlaneUpgrade" in summary
    results = _results(tmp_path / "report")
    ours = [r for r in results if r["area"] == AREA]
    assert len(ours) == SCENARIOS
    assert sorted(r["status"] for r in ours) == ["not-run"] + ["passed"] * (SCENARIOS - 1)
    assert all(r["profile"] == [AREA] for r in ours)
    others = [r for r in results if r["area"] != AREA]
    assert others and all(r["status"] == "not-applicable" for r in others)


def test_an_invalid_handler_name_fails_discovery_naming_the_handler(tmp_path: Path) -> None:
    with example_extension(tmp_path / "certs", "--broken", "handler-name") as url:
        run = _conformance(url, tmp_path / "certs" / "ca.crt", tmp_path / "report")
    assert run.returncode == 1
    failed = _failed(tmp_path / "report")
    reason = failed["Discovery answers a valid DiscoveryResponse"]
    assert "handler name Before_Cluster_Create is not valid: [a lowercase RFC 1123 label" in reason
    # Cluster API would not register it either: the ExtensionConfig says so, with upstream's text.
    registered = failed["The creation of a Cluster follows the extension's answers"]
    assert 'was not discovered: Error in discovery: failed to discover extension "under-test"' in registered


def test_a_retry_after_on_a_non_blocking_hook_fails_only_the_schema_check(tmp_path: Path) -> None:
    with example_extension(tmp_path / "certs", "--broken", "retry-after") as url:
        run = _conformance(url, tmp_path / "certs" / "ca.crt", tmp_path / "report")
    assert run.returncode == 1
    failed = _failed(tmp_path / "report")
    assert list(failed) == ["Every advertised handler answers its hook's request with a valid response"]
    reason = next(iter(failed.values()))
    assert "after-control-plane-initialized has retryAfterSeconds 30 on AfterControlPlaneInitialized" in reason


def test_garbage_from_discovery_is_a_clear_verdict(tmp_path: Path) -> None:
    with example_extension(tmp_path / "certs", "--broken", "garbage") as url:
        started = time.monotonic()
        run = _conformance(url, tmp_path / "certs" / "ca.crt", tmp_path / "report")
    assert time.monotonic() - started < BAD_INPUT_SECONDS
    assert run.returncode == 1
    failed = _failed(tmp_path / "report")
    assert 'the answer is not a JSON object: "<html>this is not a DiscoveryResponse"' in failed[
        "Discovery answers a valid DiscoveryResponse"]
    assert "failed to decode response" in failed["The upgrade of a Cluster follows the extension's answers"]


def test_a_url_that_refuses_connections_fails_every_scenario_quickly_and_leaves_no_process(tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_bytes(make_ca("nobody").cert_pem)
    url = f"https://127.0.0.1:{_free_port()}"
    started = time.monotonic()
    run = _conformance(url, ca, tmp_path / "report")
    assert time.monotonic() - started < BAD_INPUT_SECONDS
    assert run.returncode == 1
    failed = _failed(tmp_path / "report")
    assert len(failed) == SCENARIOS
    assert all("connection refused" in reason.lower() for reason in failed.values()), failed
    assert not _processes_naming(url)


def test_a_wrong_ca_fails_with_the_certificate_named(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong-ca.crt"
    wrong.write_bytes(make_ca("someone-else").cert_pem)
    with example_extension(tmp_path / "certs") as url:
        started = time.monotonic()
        run = _conformance(url, wrong, tmp_path / "report")
    assert time.monotonic() - started < BAD_INPUT_SECONDS
    assert run.returncode == 1
    failed = _failed(tmp_path / "report")
    assert len(failed) == SCENARIOS
    tls = failed["The extension's certificate verifies against its CA for the host of its URL"]
    assert f"does not verify against the CA in --ca-file {wrong}" in tls
    assert "certificate signed by unknown authority" in tls
    assert all("certificate signed by unknown authority" in reason for reason in failed.values()), failed
