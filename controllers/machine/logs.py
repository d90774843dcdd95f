"""The machine controller's log lines, written as klog's structured text (``"message" key="value"``).

The messages are upstream's (``machine_controller.go``, ``drain/drain.go``), e.g. ``"Cordoning Node"``,
``"Drain not completed yet, requeuing in 20s"``. Lines upstream logs at verbosity 4 go to DEBUG.
"""

from __future__ import annotations

import logging

from controllers.machine.errors import go_quote

LOGGER_NAME = "controllers.machine"

log = logging.getLogger(LOGGER_NAME)


def format_line(message: str, values: dict[str, object]) -> str:
    """``"message" key="value" ...`` as klog's text format writes a structured line."""
    parts = [go_quote(message)]
    for name, value in values.items():
        parts.append(f"{name}={go_quote(str(value))}")
    return " ".join(parts)


def verbose() -> bool:
    """Whether verbose (klog ``V(4)``) lines are written: callers skip building them otherwise."""
    return log.isEnabledFor(logging.DEBUG)


def info(message: str, **values: object) -> None:
    """Log an informational line (klog level 0)."""
    if log.isEnabledFor(logging.INFO):
        log.info("%s", format_line(message, values))


def debug(message: str, **values: object) -> None:
    """Log a verbose line (klog ``V(4)``)."""
    if log.isEnabledFor(logging.DEBUG):
        log.debug("%s", format_line(message, values))


def error(message: str, err: object, **values: object) -> None:
    """Log an error line with its ``err`` value."""
    if log.isEnabledFor(logging.ERROR):
        log.error("%s", format_line(message, {**values, "err": err}))
