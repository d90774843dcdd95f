"""Who is asking: the bearer token check and the user recorded in the audit trail.

With a token configured, every request but the health and version endpoints must carry
``Authorization: Bearer <token>`` (else 401 ``Unauthorized``), and acts as ``admin``. Without
one, a bearer token names the user (``Bearer system:serviceaccount:kube-system:kubelet``), as does
a basic-auth user name; otherwise the user is ``admin``. ``Impersonate-User`` (``kubectl --as``)
overrides the user in both cases.
"""

from __future__ import annotations

import base64
import binascii
import hmac

from starlette.datastructures import Headers

from harness.apiserver.http.responses import unauthorized

ADMIN = "admin"
OPEN_PATHS = ("/readyz", "/livez", "/healthz", "/version")
IMPERSONATE_USER = "impersonate-user"


_OPEN_PREFIXES = tuple(p + "/" for p in OPEN_PATHS)


def is_open(path: str) -> bool:
    """True for paths served without authentication (health checks, version, and paths below them)."""
    return path in OPEN_PATHS or path.startswith(_OPEN_PREFIXES)


def _basic_user(credentials: str) -> str | None:
    try:
        decoded = base64.b64decode(credentials, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    return decoded.partition(":")[0] or None


def identify(headers: Headers, token: str | None) -> str:
    """The user a request acts as; 401 ``Status`` when ``token`` is set and not presented."""
    scheme, _, credentials = headers.get("authorization", "").partition(" ")
    credentials = credentials.strip()
    bearer = credentials if scheme.lower() == "bearer" and credentials else None
    if token is not None:
        if bearer is None or not hmac.compare_digest(bearer.encode(), token.encode()):
            raise unauthorized()
        user = ADMIN
    elif bearer is not None:
        user = bearer
    elif scheme.lower() == "basic":
        user = _basic_user(credentials) or ADMIN
    else:
        user = ADMIN
    return headers.get(IMPERSONATE_USER) or user
