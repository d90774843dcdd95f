"""The ``hic`` target: a third-party Hook Implementing Controller (HIC) as a process, against a served world.

:class:`HicProcess` runs the HIC's command (``--hic-command``, split as a shell would, no shell) with
``KUBECONFIG`` pointing at a kubeconfig for the management cluster, acting as :data:`HIC_USER` (the
facade takes the bearer token as the user's name, so the audit trail names the HIC's writes), and
``LIFECYCLE_TCK_HIC_CONFIG`` naming its config file. Its output goes to a log file; a HIC that does
not start, exits, or floods the server ends the scenario with a clear reason, within a bounded time.
Its whole process group is ended when it stops, so nothing it started is left behind.

:class:`HicScene` is an :class:`~harness.world.http_scene.HttpScene` whose world runs the reference
controllers (the machine controller among them) and every simulator; the HIC is the process. The
HIC does not speak the harness's control protocol, so settling with it is done by watching the wire:

* the world's clock is virtual and stays frozen between advances: the HIC sees time only through
  the objects it reads (``deletionTimestamp``, conditions);
* :meth:`HicScene.settle` settles the world, then waits, in wall time, until the world is quiet:
  every watch stream the server has open has been written out to its connection (the admin API's
  ``GET watches`` counts events given and written) and no write has been accepted for the quiet
  period; the HIC's writes settle the world as they land, so it repeats until a round sees nothing new.
  When nothing was written since the last quiet point, nothing new reached the HIC either (watch
  events come only from writes), and it returns at once; so it does when the writes since were all of
  objects the HIC does not watch (its streams were given no event) and the HIC itself wrote nothing,
  or when the HIC is not running: there is no reaction to wait for. A HIC that keeps writing for
  :data:`SETTLE_SECONDS` is flooding the server: AssertionError;
* the quiet period adapts to the HIC (:class:`QuietPeriod`): a few times the longest pause the HIC
  has been seen to take before a write (between two writes in a settle; a write that lands after a
  settle judged the HIC quiet makes it grow), never less than :data:`MIN_QUIET_SECONDS` nor more than
  :data:`QUIET_SECONDS`, and the maximum until the HIC has shown how fast it reacts;
* :meth:`HicScene.advance` moves the clock towards its target, stopping at each instant something
  was written (``POST /harness/v1/clock/advance`` with ``to`` and ``stopAfterWrite``) and settling
  there, so the HIC reacts to each write at the virtual instant it happened.

Limits, honestly: quiet is judged in wall time, so a HIC that reacts later than the quiet period
(at most :data:`QUIET_SECONDS`) after an event (a slow start-up, a batching delay, a retry back-off) is
seen reacting at a later virtual instant, or after the step that looked; and a HIC that counts time
with its own wall-clock timers (``sleep``, ``time.time()``) runs on wall time, which the frozen virtual
clock does not follow.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from harness.kube.names.capi import MACHINES_RESOURCE
from harness.targets.process import command_problem, controller_kubeconfig
from harness.world.hic import CONFIG_ENV, HicConfig, load_config
from harness.world.http_scene import HttpScene, WorldServer
from harness.world.world import World

# Who the HIC under test is on the wire (its kubeconfig's bearer token names it).
HIC_USER = "system:serviceaccount:hic-under-test:hic"
# Wall-clock quiet period: no accepted write and every watch stream written out for this long means
# the HIC has reacted to what it was sent. Long enough for a Python HIC to read an event and write
# back (tens of milliseconds), short enough that a scenario of a few dozen settles stays fast.
QUIET_SECONDS = 0.2
# The adaptive quiet period (QuietPeriod): this many times the longest pause seen before a write, and
# never shorter than MIN_QUIET_SECONDS (a HIC that has only ever reacted at once still gets time to
# read an event and answer, on a machine busy with other work).
QUIET_FACTOR = 3.0
MIN_QUIET_SECONDS = 0.05
# Wall-clock bounds: a settle that never gets quiet (a HIC flooding the server), a HIC that does not
# start watching Machines, a HIC that does not stop.
SETTLE_SECONDS = 30.0
READY_SECONDS = 60.0
STOP_SECONDS = 10.0
POLL_SECONDS = 0.01
LOG_TAIL = 4000


class QuietPeriod:
    """How long no write must land before the HIC is judged quiet: ``QUIET_FACTOR`` times the longest
    pause it has been seen to take before a write, within ``[MIN_QUIET_SECONDS, QUIET_SECONDS]``;
    ``QUIET_SECONDS`` until a pause has been seen. One per HIC command, kept for the whole run: what
    one scenario learns of the HIC's pace the next one uses."""

    def __init__(self, minimum: float = MIN_QUIET_SECONDS, maximum: float = QUIET_SECONDS,
                 factor: float = QUIET_FACTOR) -> None:
        self.minimum, self.maximum, self.factor = minimum, maximum, factor
        self.longest_pause: float | None = None
        self.samples = 0

    @property
    def seconds(self) -> float:
        """The quiet period now."""
        if self.longest_pause is None:
            return self.maximum
        return min(self.maximum, max(self.minimum, self.factor * self.longest_pause))

    def saw_late_write(self) -> None:
        """A write landed after the HIC had been judged quiet: it pauses longer than the period now."""
        self.saw_pause(self.seconds)

    def saw_pause(self, seconds: float) -> None:
        """A write landed ``seconds`` after the last thing the HIC could have reacted to."""
        self.samples += 1
        self.longest_pause = seconds if self.longest_pause is None else max(self.longest_pause, seconds)


# By HIC command: each run's HIC keeps its own pace across scenarios.
_QUIET_PERIODS: dict[tuple[str, ...], QuietPeriod] = {}


def quiet_period_of(argv: list[str]) -> QuietPeriod:
    """The (shared) quiet period of the HIC started with ``argv``."""
    return _QUIET_PERIODS.setdefault(tuple(argv), QuietPeriod())


class HicError(AssertionError):
    """The HIC under test did not start, ended, or flooded the server; the message says which, with its log."""


class HicProcess:
    """The HIC's ``command`` against the management cluster at ``server``, with its ``config`` file.

    :meth:`start` starts it (again); :meth:`stop` ends it and everything it started; :meth:`close`
    also removes its files."""

    def __init__(self, command: str, config: str | Path, server: str, *, user: str = HIC_USER) -> None:
        self.argv = shlex.split(command)
        if not self.argv:
            raise HicError("the HIC command is empty (--hic-command)")
        self.config_path = Path(config).resolve()
        self.user = user
        self._dir = Path(tempfile.mkdtemp(prefix="lifecycle-tck-hic-"))
        self.kubeconfig = self._dir / "kubeconfig"
        self.kubeconfig.write_text(controller_kubeconfig(server, user))
        self.log = self._dir / "hic.log"
        self._process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def exit_code(self) -> int | None:
        return None if self._process is None else self._process.poll()

    def log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-LOG_TAIL:]
        except OSError:
            return ""

    def start(self) -> None:
        """Start the command (a HicError if it cannot be run at all)."""
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig), CONFIG_ENV: str(self.config_path)}
        with self.log.open("ab") as sink:
            sink.write(f"--- start {self.starts + 1}: {shlex.join(self.argv)}\n".encode())
            sink.flush()
            try:
                self._process = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=sink,
                                                 stderr=subprocess.STDOUT, env=env, start_new_session=True)
            except OSError as err:
                raise HicError(f"the HIC command {shlex.join(self.argv)} could not be started: {err}") from None
        self.starts += 1

    def check_alive(self) -> None:
        """HicError if the HIC has ended."""
        if self._process is not None and self._process.poll() is not None:
            raise HicError(f"the HIC ended with exit code {self._process.returncode}; its log:\n{self.log_tail()}")

    def stop(self, timeout: float = STOP_SECONDS) -> None:
        """End the HIC and its process group: SIGTERM, then SIGKILL after ``timeout``."""
        process, self._process = self._process, None
        if process is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if process.poll() is not None:
                break
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                break
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                continue
        # Anything the HIC left in its group goes too.
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if process.poll() is None:
            process.wait(timeout)

    def close(self) -> None:
        """Stop the HIC and remove its files."""
        try:
            self.stop()
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)


class HicScene(HttpScene):
    """A scene whose world (every simulator and reference controller) is served over HTTP, with the
    HIC under test as a process (see the module docstring). The HIC starts when :meth:`start_hic`
    is called (a scenario's Given step), not with the scene."""

    def __init__(self, command: str, config: str | Path, *, world: World | None = None,
                 server: WorldServer | None = None) -> None:
        self.hic_config: HicConfig = load_config(config)
        super().__init__(world if world is not None else World(), server=server)
        self.hic = HicProcess(command, config, self.server.base_url)
        self.hic_user = self.hic.user
        self.quiet = quiet_period_of(self.hic.argv)
        # Wall time (monotonic) at which the last settle judged the world quiet.
        self._quiet_at: float | None = None
        self._quiet_total: int | None = None
        # Events given to the HIC's streams when it was last judged quiet (None: it must be waited for).
        self._quiet_events: int | None = None
        # How many settles waited out a quiet period, and how many found nothing new for the HIC.
        self.quiet_waits = 0
        self.skipped_waits = 0
        self._stream_ids_before: set[str] = set()

    # -- the HIC -------------------------------------------------------------------------------------

    def start_hic(self) -> None:
        """Start the HIC and wait (wall time, bounded) until it watches Machines; then settle."""
        self._stream_ids_before = {s["auditID"] for s in self._stream_list() if s["user"] == self.hic_user}
        self._quiet_events = None  # what it reads at start-up is new to it: its reaction is waited for
        self.hic.start()
        deadline = time.monotonic() + READY_SECONDS
        while not self._hic_watches_machines():
            self.hic.check_alive()
            if time.monotonic() > deadline:
                raise HicError(f"the HIC did not start watching Machines within {READY_SECONDS:.0f} s; "
                               f"its log:\n{self.hic.log_tail()}")
            threading.Event().wait(POLL_SECONDS * 5)
        self.settle()

    def stop_hic(self) -> None:
        """Stop the HIC (killed with its process group), then settle."""
        self.hic.stop()
        self._await_hic_hangup()
        self.settle()

    def restart_hic(self) -> None:
        """Kill the HIC and start it again."""
        self.stop_hic()
        self.start_hic()

    def _hic_watches_machines(self) -> bool:
        return any(s["user"] == self.hic_user and s["resource"] == MACHINES_RESOURCE and not s["ended"]
                   and s["auditID"] not in self._stream_ids_before for s in self._stream_list())

    def _await_hic_hangup(self) -> None:
        deadline = time.monotonic() + STOP_SECONDS
        while any(s["user"] == self.hic_user and not s["ended"] for s in self._stream_list()):
            if time.monotonic() > deadline:
                return  # the server notices at its next write to the stream; closing the scene checks again
            threading.Event().wait(POLL_SECONDS)

    def _stream_list(self) -> list[dict[str, Any]]:
        return list(self._get("/watches")["items"])

    # -- time ----------------------------------------------------------------------------------------

    @staticmethod
    def _written_out(streams: list[dict[str, Any]]) -> bool:
        return all(s["ended"] or s.get("written", s["events"]) >= s["events"] for s in streams)

    def _flushed(self) -> bool:
        return self._written_out(self._stream_list())

    def _hic_events(self, streams: list[dict[str, Any]]) -> int:
        """How many events the server has given the HIC's watch streams (ended ones included)."""
        return sum(int(s["events"]) for s in streams if s["user"] == self.hic_user)

    def _total(self) -> int:
        return int(self._get("/audit", {"since": str(self._quiet_total or 0), "diff": "false"})["total"])

    def _nothing_new_for_hic(self, streams: list[dict[str, Any]]) -> bool:
        """Whether the HIC has nothing new to react to since it was last judged quiet: it is not running,
        or its streams were given no event and it wrote nothing (the world's writes since were of objects
        it does not watch, so no reaction can come)."""
        if not self.hic.running:
            return True
        return (self._quiet_events is not None and self._hic_events(streams) == self._quiet_events
                and not self._hic_wrote_since_quiet())

    def _await_quiet(self) -> int:
        """Wait until every stream is written out and no write landed for the quiet period (at once when
        nothing new reached the HIC); the audit size then. Each pause before a write teaches the quiet
        period the HIC's pace."""
        deadline = time.monotonic() + SETTLE_SECONDS
        total, since = self._total(), time.monotonic()
        first = True
        while True:
            if self.hic.running or self.hic.starts:
                self.hic.check_alive()
            now_total = self._total()
            streams = self._stream_list()
            if now_total != total:
                if self.hic.running:
                    self.quiet.saw_pause(time.monotonic() - since)
                total, since = now_total, time.monotonic()
            elif first and self._written_out(streams) and self._nothing_new_for_hic(streams):
                self.skipped_waits += 1
                return total
            elif time.monotonic() - since >= self.quiet.seconds and self._written_out(streams):
                self._quiet_at = time.monotonic()
                self._quiet_events = self._hic_events(streams)
                self.quiet_waits += 1
                return total
            first = False
            if time.monotonic() > deadline:
                raise HicError(
                    f"the world did not get quiet within {SETTLE_SECONDS:.0f} s: writes kept landing "
                    f"({total} so far; the HIC's last: {self._last_hic_writes()}); its log:\n{self.hic.log_tail()}"
                )
            threading.Event().wait(POLL_SECONDS)

    def _hic_wrote_since_quiet(self) -> bool:
        records = self._get("/audit", {"since": str(self._quiet_total or 0), "diff": "false"})["items"]
        return any(r["user"] == self.hic_user for r in records)

    def _last_hic_writes(self, count: int = 5) -> list[str]:
        records = [r for r in self._get("/audit", {"since": str(max(0, (self._quiet_total or 0))), "diff": "false"})[
            "items"] if r["user"] == self.hic_user]
        return [f"{r['verb']} {r['resource']} {r['namespace']}/{r['name']}" for r in records[-count:]]

    def settle(self) -> None:
        """Settle the world, then wait until it is quiet (module docstring), until nothing new happens."""
        while True:
            answer = self._post("/clock/advance", {"seconds": 0})
            self._now = float(answer["unix"])
            total = self._total()
            if self._quiet_at is not None and total != self._quiet_total and self._hic_wrote_since_quiet():
                # The HIC wrote after the last settle had judged the world quiet: it reacted later than
                # the quiet period, which must grow (the write's own time is not known: at least that much).
                self.quiet.saw_late_write()
            self._quiet_at = None
            if not answer["wrote"] and total == self._quiet_total and self._flushed():
                return
            self._quiet_total = self._await_quiet()
            if self._quiet_total == total and not answer["wrote"]:
                return

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward, stopping and settling at each instant something is written."""
        self.settle()
        target = self.now() + max(0.0, seconds)
        while True:
            answer = self._post("/clock/advance", {"to": target, "stopAfterWrite": True})
            self._now = float(answer["unix"])
            if answer["wrote"]:
                self.settle()
            if self._now >= target:
                return

    def close(self) -> None:
        """Stop the HIC (its watches end with it), then close as an :class:`HttpScene` does."""
        try:
            self.hic.close()
            self._await_hic_hangup()
        finally:
            super().close()


def check_hic_options(command: str | None, config: str | None) -> str | None:
    """What is wrong with ``--hic-command`` and ``--hic-config`` (None: nothing): both given, the
    command's program found, the config valid."""
    from harness.world.hic import HicConfigError

    if not command or not config:
        return "--target hic needs --hic-command CMD and --hic-config FILE"
    problem = command_problem("--hic-command", command)
    if problem is not None:
        return problem
    try:
        load_config(config)
    except HicConfigError as err:
        return f"--hic-config: {err}"
    return None
