"""API group and version strings (apimachinery's ``schema.ParseGroupVersion``)."""

from __future__ import annotations

UNEXPECTED_GROUP_VERSION = "unexpected GroupVersion string: {text}"


def parse_group_version(text: str) -> tuple[str, str]:
    """``schema.ParseGroupVersion``: ``(group, version)``. ``""`` and ``"/"`` are empty, ``v1`` is a version of
    the core group, ``g/v`` both; more slashes raise ``ValueError`` with upstream's message."""
    if not text or text == "/":
        return "", ""
    parts = text.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise ValueError(UNEXPECTED_GROUP_VERSION.format(text=text))
