"""harness/kube/time.py: metav1.Time's wire format, and RFC 3339 parsing."""

from __future__ import annotations

from harness.kube.time import parse_rfc3339, rfc3339


def test_a_time_is_written_with_seconds_precision_and_z() -> None:
    assert rfc3339(1767225600.9) == "2026-01-01T00:00:00Z"


def test_offsets_and_fractions_parse() -> None:
    assert parse_rfc3339("2026-01-01T00:00:00Z") == 1767225600.0
    assert parse_rfc3339("2026-01-01T01:00:00.5+01:00") == 1767225600.5
