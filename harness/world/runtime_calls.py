"""What the reference controllers' Runtime SDK calls exchanged in this process, for the conformance
harness to hear (harness/targets/extension.py): a third-party Runtime Extension keeps no record the harness
can read, so the harness listens to the calls the reference topology controller makes to it. The world
runs those controllers, so it is the layer that may hand their exchanges up; the oracle reads only the
fields of each exchange (``url``, ``request``, ``status_code``, ``body``, ``error``, ``seconds``) and
shares no protocol code with the reference client.
"""

from __future__ import annotations

from collections.abc import Callable

from controllers.runtime import transport

Exchange = transport.Exchange


def observe(observer: Callable[[Exchange], None]) -> Callable[[], None]:
    """Tell ``observer`` of every Runtime SDK exchange the controllers of this process make from now on;
    returns the function that stops telling it."""
    return transport.observe(observer)
