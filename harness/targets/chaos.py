"""Running scenarios under ``--chaos``: what a scene does differently, and which states are the faults' own.

Under chaos the reference controllers' requests fail now and then (409, 429, 500, dropped and expired
watches; :func:`harness.apiserver.faults.chaos_rules`). A controller retries a failed reconcile
after a backoff (5 ms, doubling with each failure of that key, whatever its cause) and re-lists a watch
after 0.8 s, both on the virtual clock, so right after a settle the world may be a few milliseconds
short of where it would be without faults (or a second: Cluster API's machine controller holds a
deletion back 1 s after its last pass). :class:`RetryingScene` rides those retries out: after every
settle or advance it moves the clock to each pending retry of a request the apiserver failed
(:meth:`harness.client.runtime.Manager.retry_due`, within :data:`RETRY_GRACE_SECONDS`), and only to
those, so a Then-step sees the state the retry reaches. Time never moves when no request failed.

While a request fails, the controllers say so, as upstream's do: a Warning event with the error, a
condition message asking to check the controller logs. :func:`transient` tells those apart, so that a
step checking that no warning was recorded ignores what the injected faults themselves caused; the
failure still shows in the scenario's timeline. A step checking that a Machine's deletion stages never
went back checks only their order under chaos: upstream's machine controller, failing to read the
infrastructure machine, reports that it waits for it to be deleted, even after it was. And a step
checking that a lifecycle hook is not called again before its ``retryAfterSeconds`` checks only that it
is called again after: a reconcile that called the hook and then failed on a request is retried at once,
and calls the hook again, as upstream's topology controller does.
"""

from __future__ import annotations

from typing import Any

from harness.apiserver.faults import INTERNAL_ERROR_TEXT, TOO_MANY_REQUESTS_MESSAGE
from harness.kube.errors import OPTIMISTIC_LOCK_MESSAGE
from harness.world.scene import Scene

# Retries of failed requests are ridden out however far their backoff has grown (a key that failed for
# other reasons first retries later and later), up to this.
RETRY_GRACE_SECONDS = 2.0
# Consecutive retries ridden out after one settle (faults at the chaos rates used end long before).
MAX_RETRIES_RIDDEN = 100
# What a controller writes while a request it made fails: the faults' own texts, and Cluster API's
# generic "check the logs" message for a step that failed.
TRANSIENT_TEXTS = (
    INTERNAL_ERROR_TEXT.partition("{")[0],
    TOO_MANY_REQUESTS_MESSAGE,
    OPTIMISTIC_LOCK_MESSAGE,
    "please check controller logs for errors",
)


def transient(message: str | None) -> bool:
    """Whether ``message`` (an event's, a condition's) reports a failed request rather than a state."""
    text = (message or "").lower()
    return any(marker.lower() in text for marker in TRANSIENT_TEXTS)


class RetryingScene:
    """A :class:`Scene` that, after each settle or advance, runs the controllers' pending retries of
    failed requests (those due within :data:`RETRY_GRACE_SECONDS`); everything else is ``scene``'s."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene

    def __getattr__(self, name: str) -> Any:
        return getattr(self.scene, name)

    def settle(self) -> None:
        self.scene.settle()
        self._ride_out()

    def advance(self, seconds: float) -> None:
        self.scene.advance(seconds)
        self._ride_out()

    def _ride_out(self) -> None:
        for _ in range(MAX_RETRIES_RIDDEN):
            due = self.scene.retry_due()
            now = self.scene.now()
            if due is None or due - now > RETRY_GRACE_SECONDS:
                return
            self.scene.advance(max(0.0, due - now))
