"""The pod subresources a kubelet answers: ``log``, ``exec``, ``attach`` and ``portforward``.

Declared here so routing and discovery know them (verbs and kinds as a 1.32 apiserver lists them);
their answers are HTTP streams (or the errors a node without a kubelet gives), written by the
facade in ``harness/apiserver/http/streaming.py``.
"""

from __future__ import annotations

from harness.apiserver.resources import ResourceType
from harness.apiserver.subresources.base import CREATE, GET, ServedBy


class _PodStream(ServedBy):
    streaming = True
    resources = (("", "pods"),)
    options_kind = ""

    def __init__(self, name: str, verbs: tuple[str, ...], options_kind: str) -> None:
        self.name = name
        self.verbs = verbs
        self.options_kind = options_kind

    def response_kind(self, rt: ResourceType) -> tuple[str, str, str]:
        return rt.group, rt.version, self.options_kind


# pods/log answers as the Pod kind; the others with their options kinds (PodExecOptions, ...).
LOG = _PodStream("log", (GET,), "Pod")
EXEC = _PodStream("exec", (CREATE, GET), "PodExecOptions")
ATTACH = _PodStream("attach", (CREATE, GET), "PodAttachOptions")
PORTFORWARD = _PodStream("portforward", (CREATE, GET), "PodPortForwardOptions")
