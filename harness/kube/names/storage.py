"""Well-known names of the ``storage.k8s.io`` API group and CSI."""

from __future__ import annotations

STORAGE_V1 = "storage.k8s.io/v1"
VOLUME_ATTACHMENT = "VolumeAttachment"
CSI_UNIQUE_NAME = "kubernetes.io/csi/{driver}^{handle}"


__all__ = [
    "STORAGE_V1",
    "VOLUME_ATTACHMENT",
    "CSI_UNIQUE_NAME",
]
