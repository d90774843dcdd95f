"""The reference Runtime Extension's admin endpoint (``/admin``): typed, its errors Kubernetes
``Status`` bodies, JSON bodies only, no foreign origins; and its key files private to the user."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from harness.world.extension import HookResponder
from harness.world.extension.app import create_app
from harness.world.extension.server import CA_KEY_FILE, KEY_FILE, load_or_make_certificates


@pytest.fixture
def admin() -> TestClient:
    return TestClient(create_app(HookResponder()), base_url="https://127.0.0.1:9443")


def test_a_scripted_answer_is_taken_and_a_bad_one_is_a_status_naming_the_field(admin: TestClient) -> None:
    good = admin.post("/admin/answers", json={"hook": "BeforeClusterUpgrade", "behaviour": "hang"})
    unknown_hook = admin.post("/admin/answers", json={"hook": "Teapot"})
    wrong_type = admin.post("/admin/answers", json={"hook": "BeforeClusterUpgrade", "response": "yes"})
    extra = admin.post("/admin/answers", json={"hook": "BeforeClusterUpgrade", "colour": "red"})
    assert good.status_code == 200 and good.json() == {"ok": True}
    assert unknown_hook.status_code == 400 and unknown_hook.json()["kind"] == "Status"
    assert "unknown hook 'Teapot'" in unknown_hook.json()["message"]
    assert wrong_type.status_code == 400 and "response" in wrong_type.json()["message"]
    assert extra.status_code == 400 and "colour" in extra.json()["message"] and "detail" not in extra.json()


def test_a_body_that_is_not_json_or_from_a_foreign_origin_is_refused(admin: TestClient) -> None:
    text = admin.post("/admin/reset", content=b"{}", headers={"Content-Type": "text/plain"})
    foreign = admin.post("/admin/reset", json={}, headers={"Origin": "http://evil.example"})
    own = admin.post("/admin/reset", json={}, headers={"Origin": "https://127.0.0.1:9443"})
    assert text.status_code == 415 and text.json()["reason"] == "UnsupportedMediaType"
    assert foreign.status_code == 403 and foreign.json()["reason"] == "Forbidden"
    assert own.status_code == 200


def test_the_admin_endpoint_has_an_openapi_document_and_offline_docs(admin: TestClient) -> None:
    document = admin.get("/admin/openapi.json").json()
    page = admin.get("/admin/docs")
    assert {"/answers", "/discovery", "/reset", "/calls"} <= set(document["paths"])
    assert page.status_code == 200 and "/admin/docs-assets/swagger-ui-bundle.js" in page.text
    assert "https://" not in page.text


def test_key_files_are_written_readable_by_the_owner_only(tmp_path: Path) -> None:
    load_or_make_certificates(tmp_path, [])
    for name in (KEY_FILE, CA_KEY_FILE):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600


def test_an_existing_key_file_readable_by_others_is_narrowed(tmp_path: Path) -> None:
    load_or_make_certificates(tmp_path, [])
    (tmp_path / KEY_FILE).chmod(0o644)
    load_or_make_certificates(tmp_path, [])
    assert stat.S_IMODE((tmp_path / KEY_FILE).stat().st_mode) == 0o600
