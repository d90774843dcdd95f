"""The fault names of the kit's fault rules (the admin API's ``/harness/v1/faults`` and ``Scene.add_fault``):
what a rule makes the apiserver answer. The apiserver applies them (harness/apiserver/faults.py); a step
names them through this module and adds rules through its Scene."""

from __future__ import annotations

CONFLICT = "Conflict"
TOO_MANY_REQUESTS = "TooManyRequests"
INTERNAL_ERROR = "InternalError"
EXPIRED = "Expired"
DROP_WATCH = "DropWatch"
LATENCY = "Latency"
FAULTS = (CONFLICT, TOO_MANY_REQUESTS, INTERNAL_ERROR, EXPIRED, DROP_WATCH, LATENCY)
# Faults that answer with an error Status (the ones in-process clients see too).
ERROR_FAULTS = (CONFLICT, TOO_MANY_REQUESTS, INTERNAL_ERROR, EXPIRED)
