"""Kubernetes' wire format of time: ``metav1.Time`` as RFC 3339 with seconds precision and ``Z``, and the
parsing of any RFC 3339 timestamp. The virtual clock (harness.clock) says what time it is; this says how
a time is written."""

from __future__ import annotations

from datetime import UTC, datetime


def rfc3339(instant: float) -> str:
    """``2026-01-01T00:00:00Z`` for a Unix time (fractions are truncated, as metav1.Time does)."""
    return datetime.fromtimestamp(int(instant), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(text: str) -> float:
    """The Unix time of an RFC 3339 timestamp (``Z`` or an offset, optional fractions)."""
    value = text.strip()
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    return datetime.fromisoformat(value).timestamp()
