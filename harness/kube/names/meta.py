"""Well-known names of ``meta/v1`` and the API machinery: finalizers and propagation policies of
deletion, watch event types, patch content types, admission operations, headers."""

from __future__ import annotations

# Deletion: the garbage collector's finalizers and propagation policies
ORPHAN_FINALIZER = "orphan"
FOREGROUND_FINALIZER = "foregroundDeletion"
PROPAGATION_BACKGROUND = "Background"
PROPAGATION_FOREGROUND = "Foreground"
PROPAGATION_ORPHAN = "Orphan"

# Watch event types
ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"
BOOKMARK = "BOOKMARK"
ERROR = "ERROR"

# Patch content types
JSON_CONTENT_TYPE = "application/json"
JSON_PATCH_CONTENT_TYPE = "application/json-patch+json"
MERGE_PATCH_CONTENT_TYPE = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH_CONTENT_TYPE = "application/strategic-merge-patch+json"
APPLY_PATCH_CONTENT_TYPE = "application/apply-patch+yaml"
# The strategic merge patch directive key (``$patch: replace|delete|merge``).
PATCH_DIRECTIVE = "$patch"

# Admission (admission.k8s.io operations, the webhook denial message)
CREATE = "CREATE"
UPDATE = "UPDATE"
ADMISSION_DENIED_MESSAGE = "admission webhook {name} denied the request: {message}"

# API machinery
META_GROUP = "meta.k8s.io"
AUDIT_ID_HEADER = "Audit-Id"
RANDOM_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


__all__ = [
    "ORPHAN_FINALIZER",
    "FOREGROUND_FINALIZER",
    "PROPAGATION_BACKGROUND",
    "PROPAGATION_FOREGROUND",
    "PROPAGATION_ORPHAN",
    "ADDED",
    "MODIFIED",
    "DELETED",
    "BOOKMARK",
    "ERROR",
    "JSON_CONTENT_TYPE",
    "JSON_PATCH_CONTENT_TYPE",
    "MERGE_PATCH_CONTENT_TYPE",
    "STRATEGIC_MERGE_PATCH_CONTENT_TYPE",
    "APPLY_PATCH_CONTENT_TYPE",
    "PATCH_DIRECTIVE",
    "CREATE",
    "UPDATE",
    "ADMISSION_DENIED_MESSAGE",
    "META_GROUP",
    "AUDIT_ID_HEADER",
    "RANDOM_ALPHABET",
]
