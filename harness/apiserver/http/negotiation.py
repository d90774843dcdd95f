"""Media types: reading ``Content-Type`` and ``Accept`` the way the apiserver negotiates them.

A media type keeps its parameters (``application/json;as=Table;v=v1;g=meta.k8s.io``): Kubernetes
uses them to ask for a different shape of the same resource (a Table, aggregated discovery).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.kube.names.meta import JSON_CONTENT_TYPE as JSON

YAML = "application/yaml"
ANY = "*/*"
APPLICATION_ANY = "application/*"


@dataclass(frozen=True)
class MediaType:
    """A media type (lower-cased ``type/subtype``) with its parameters."""

    mime: str
    params: dict[str, str] = field(default_factory=dict)

    @property
    def quality(self) -> float:
        try:
            return float(self.params.get("q", "1"))
        except ValueError:
            return 0.0

    def accepts_json(self) -> bool:
        """True when a JSON body satisfies this media type."""
        return self.mime in (JSON, ANY, APPLICATION_ANY)


def parse_media_type(text: str | None) -> MediaType:
    """Parse one media type; parameter names are lower-cased, values keep their case."""
    parts = (text or "").split(";")
    mime = parts[0].strip().lower()
    params: dict[str, str] = {}
    for part in parts[1:]:
        key, sep, value = part.partition("=")
        if sep:
            params[key.strip().lower()] = value.strip().strip('"')
    return MediaType(mime, params)


def parse_accept(header: str | None) -> list[MediaType]:
    """The media types of an ``Accept`` header, most preferred first (by ``q``, then by order)."""
    if not header:
        return [MediaType(ANY)]
    types = [parse_media_type(item) for item in header.split(",") if item.strip()]
    # sorted() is stable, so equal weights keep the client's order.
    return sorted(types, key=lambda m: -m.quality) or [MediaType(ANY)]
