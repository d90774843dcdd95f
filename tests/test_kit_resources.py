"""The kit finds its packaged files through package resources, says which one is missing or corrupt
in one line (exit 2, no traceback), and names the versions it follows (harness/resources.py,
harness/versions.py, ``lifecycle-tck --version``)."""

from __future__ import annotations

import contextlib
import importlib
import io
import socket
import sys
from pathlib import Path

import pytest
import yaml

from harness import resources
from harness.__main__ import main
from harness.apiserver.http.version import VERSION_INFO
from harness.targets.conformance import isolated
from harness.versions import CLUSTER_API_VERSION, KUBERNETES_VERSION

CHECKOUT = Path(__file__).resolve().parent.parent


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def fake_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """Make one of the kit's packages resolve to an empty folder the test fills in."""
    real = resources.package_dir

    def use(package: str) -> Path:
        folder = tmp_path / package
        folder.mkdir()
        monkeypatch.setattr(resources, "package_dir", lambda name: folder if name == package else real(name))
        return folder

    return use


def test_version_names_the_kit_kubernetes_and_cluster_api() -> None:
    code, out, _ = run_cli(["--version"])
    assert code == 0
    assert out.startswith("lifecycle-tck ")
    assert f"Kubernetes {KUBERNETES_VERSION}" in out and f"Cluster API {CLUSTER_API_VERSION}" in out
    assert KUBERNETES_VERSION.startswith("v1.32.") and CLUSTER_API_VERSION == "v1.10"


def test_the_api_servers_version_is_the_kubernetes_version_the_kit_follows() -> None:
    assert VERSION_INFO["gitVersion"] == KUBERNETES_VERSION
    assert (VERSION_INFO["major"], VERSION_INFO["minor"]) == ("1", "32")


def test_packaged_resources_are_found_through_their_packages() -> None:
    assert resources.behaviors_file().name == "behaviors.yaml"
    assert resources.behaviors(), "the catalogue lists behaviors"
    assert any(resources.crd_dir().glob("*.yaml"))
    assert yaml.safe_load(resources.reference_hic_config().read_text())
    assert (resources.import_root() / "harness" / "__init__.py").is_file()


def test_a_users_package_named_fixtures_does_not_hide_the_kits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    own = tmp_path / "fixtures"
    own.mkdir()
    (own / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "fixtures", raising=False)  # restored after the test
    assert importlib.import_module("fixtures").__file__ == str(own / "__init__.py")
    assert resources.crd_dir().parent != own and (resources.crd_dir().parent / "__init__.py").is_file()


def test_a_missing_behaviors_catalogue_is_one_line_naming_it(fake_package) -> None:
    fake_package("features")
    code, out, err = run_cli(["behaviors", "--results", "none"])
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "packaged resource features/behaviors.yaml is missing" in err


def test_a_corrupt_behaviors_catalogue_is_one_line_naming_it(fake_package) -> None:
    (fake_package("features") / "behaviors.yaml").write_text("behaviors: [unclosed\n")
    code, _, err = run_cli(["conformance", "--level", "must"])
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "packaged resource features/behaviors.yaml is corrupt" in err


def test_missing_crds_stop_serve_with_one_line_naming_them(fake_package) -> None:
    fake_package("fixtures")
    code, _, err = run_cli(["serve", "--port", "0"])
    assert code == 2
    assert err.count("\n") == 1 and "packaged resource fixtures/crds/ is missing" in err


def test_a_corrupt_crd_stops_serve_with_one_line_naming_it(fake_package) -> None:
    crds = fake_package("fixtures") / "crds"
    crds.mkdir()
    (crds / "broken.yaml").write_text("kind: [unclosed\n")
    code, _, err = run_cli(["serve", "--port", "0"])
    assert code == 2
    assert err.count("\n") == 1 and "fixtures/crds is corrupt" in err and "broken.yaml" in err


def test_serve_on_a_port_already_taken_is_one_line_exit_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        code, _, err = run_cli(["serve", "--port", str(port), "--controllers", "none",
                                "--kubeconfig", str(tmp_path / "kubeconfig")])
    assert code == 2
    assert err.count("\n") == 1 and f"cannot listen on 127.0.0.1:{port}" in err


def test_serve_with_a_kubeconfig_that_cannot_be_written_is_one_line_exit_2(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    code, _, err = run_cli(["serve", "--port", "0", "--controllers", "none",
                            "--kubeconfig", str(blocker / "kubeconfig")])
    assert code == 2
    assert err.count("\n") == 1 and f"cannot write the kubeconfig {blocker / 'kubeconfig'}" in err


def test_conformance_runs_the_suite_without_the_users_pytest_configuration() -> None:
    features = resources.features_dir()
    options = isolated(features)
    assert options[options.index("-c") + 1] not in (str(CHECKOUT / "pyproject.toml"),)
    assert f"--confcutdir={features.parent}" in options and f"--rootdir={features.parent}" in options
    assert "no:lifecycle_tck" in options
    # Plugins of libraries the suite does not use are left out too (they hook every test and fixture).
    assert "no:hypothesispytest" in options and "no:anyio" in options
