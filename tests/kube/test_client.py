"""harness/kube/client.py: find_in reads an object or None for a 404, and lets other errors through."""

from __future__ import annotations

from typing import Any

import pytest

from harness.kube import errors
from harness.kube.client import ApiError, find_in


class _Answers:
    """A client whose ``get`` raises the given error (the only method find_in calls)."""

    def __init__(self, error: ApiError | None) -> None:
        self.error = error

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        if self.error is not None:
            raise self.error
        return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}}


def test_an_object_that_exists_is_returned() -> None:
    assert find_in(_Answers(None), "v1", "Pod", "p", "default") == {  # type: ignore[arg-type]
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}


def test_a_404_is_none_and_another_error_is_raised() -> None:
    assert find_in(_Answers(errors.not_found("pods", "", "p")), "v1", "Pod", "p") is None  # type: ignore[arg-type]
    with pytest.raises(ApiError):
        find_in(_Answers(errors.internal("boom")), "v1", "Pod", "p")  # type: ignore[arg-type]
