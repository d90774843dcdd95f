"""The ``controller`` target: a third-party controller as a process, against a served world.

``lifecycle-tck conformance --target controller --profile P [--profile P ...] --command CMD
[--stdio-control] [--wall-budget SECONDS]`` runs the scenarios of the claimed controller profiles
(:data:`harness.targets.profiles.CONTROLLER_PROFILES`: ``machine_controller``, ``cluster_controller``,
``topology_controller``, ``addon_controller``, ``rollout_deployment``, ``rollout_statefulset``,
``rollout_daemonset``) with the reference controllers owning them switched off; every other reference
controller, simulator and fake provider runs in the world as usual. ``--target machine-controller`` is
the alias of ``--profile machine_controller`` (acting as :data:`MACHINE_CONTROLLER_USER`, as it always
did). ``CMD`` (split as a shell would, no shell) runs as those controllers: it gets ``KUBECONFIG`` naming
a kubeconfig with the context ``management`` (current) and one context per workload cluster
(``<namespace>/<name>``, rewritten as clusters come and go), acting as :data:`UNDER_TEST_USER` (the
bearer token is the user's name, so the audit trail names its writes). It starts afresh for each
scenario (each has a world of its own) and its whole process group is ended with the scenario; a
scenario that restarts the claimed controllers kills it and starts it again.

Time is the hard part: the scenarios run on the world's virtual clock (a drain that times out after
10 minutes, a hook that blocks for hours), and a scenario must not take hours of wall time. So the
command runs in one of two modes:

* **lockstep** (``--stdio-control``): the command speaks the harness's JSON-line control protocol on
  stdin/stdout (harness/client/remote.py: it says it is ready, then on each ``settle`` moves its clock
  to the instant given, catches up with its watches and answers with its next timer). It is then driven
  exactly as the reference controllers are under ``--target reference-process`` (:class:`LockstepScene`
  is a :class:`~harness.targets.process.ProcessScene` with another command): every write reaches it at
  the virtual instant it happened and its timers fire at theirs, so every scenario applies and its
  outcome does not depend on the machine's speed. ``python -m controllers --only machine --control
  stdio`` is such a command (the reference machine controller; tests/test_machine_controller_target.py).
* **wall clock** (the default, for a controller that knows nothing of the harness, e.g. a real Cluster
  API controller manager): the world's clock follows wall time, so the timestamps the server writes and
  the controller's own clock agree (:class:`WallClockScene`). Settling is judged as the hic target does
  (harness/targets/hic.py): the world is ticked and is settled once no write has landed for
  :data:`QUIET_SECONDS` and every watch stream is written out. Time can then only pass as fast as wall
  time: a scenario may let up to ``--wall-budget`` seconds (default :data:`WALL_BUDGET_SECONDS`) of
  virtual time pass in all (waited for in wall time); one that needs more (a drain timeout, "10 minutes
  pass", a hook waiting for hours) is stopped there and reported as **not run**, with the step's need as
  its reason, never as passed: the verdict is then INCOMPLETE (exit 3), and the summary says how many
  MUST scenarios did not run and why.

Bad input (a command that cannot be started, ends, never says it is ready, floods the server) ends the
scenario with a clear reason within a bounded wall time (:data:`READY_SECONDS`, :data:`SETTLE_SECONDS`,
the protocol's own bounds) and leaves no process behind.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.targets.conformance import NOT_APPLICABLE_SKIP
from harness.targets.process import (
    STOP_SECONDS,
    ControllerProcess,
    ControllerProcessError,
    ControllerProcesses,
    ProcessScene,
    command_problem,
    controller_kubeconfig,
)
from harness.targets.profiles import (
    CONTROLLER_PROFILES,
    MACHINE_CONTROLLER_USER,
    PROFILES,
    UNDER_TEST_USER,
    UnknownProfileError,
    check_profiles,
    controllers_besides,
    reference_controllers,
)
from harness.world.http_scene import HttpScene, WorldServer
from harness.world.world import World

TARGET = "machine-controller"
CONTROLLER_TARGET = "controller"
AREA = "machine_deletion"
PROFILE = "machine_controller"
# What a controller of each profile watches first: the command is ready once it watches one of them.
PROFILE_RESOURCES: dict[str, tuple[str, ...]] = {
    "machine_controller": ("machines.cluster.x-k8s.io",),
    "cluster_controller": ("clusters.cluster.x-k8s.io",),
    "topology_controller": ("clusters.cluster.x-k8s.io", "extensionconfigs.runtime.cluster.x-k8s.io"),
    "addon_controller": ("clusterprofiles.config.projectsveltos.io", "clusters.cluster.x-k8s.io"),
    "rollout_deployment": ("deployments.apps",),
    "rollout_statefulset": ("statefulsets.apps",),
    "rollout_daemonset": ("daemonsets.apps",),
}
# Wall-clock mode: how much virtual time a scenario may let pass in all (each second waited for);
# a few settle rounds of a hook owner or a drain retry fit, a timeout of minutes does not.
WALL_BUDGET_SECONDS = 10.0
# Wall-clock quiet period and bounds (see harness/targets/hic.py for the reasoning).
QUIET_SECONDS = 0.3
SETTLE_SECONDS = 30.0
READY_SECONDS = 30.0
TICK_SECONDS = 0.05
LOG_TAIL = 3000
# Lockstep: how often a command awaited is checked for having ended, and how long its last answer may lag.
EXIT_POLL_SECONDS = 0.1
EXIT_GRACE_SECONDS = 0.2


class MachineControllerError(AssertionError):
    """The command under test did not start, ended, or flooded the server; the message says which."""


ControllerUnderTestError = MachineControllerError


def check_options(command: str | None, target: str = TARGET, profiles: list[str] | None = None,
                  wall_budget: float | None = None) -> str | None:
    """What is wrong with the options of ``target`` (None: nothing): ``--command`` given, parseable, its
    program found; for ``controller`` at least one ``--profile``, each a controller profile; a positive
    ``--wall-budget``."""
    if target == CONTROLLER_TARGET:
        if not profiles:
            return f"--target controller needs --profile P (one of {', '.join(CONTROLLER_PROFILES)})"
        try:
            check_profiles(profiles, CONTROLLER_PROFILES)
        except UnknownProfileError as err:
            other = next((p for p in profiles if p in PROFILES and p not in CONTROLLER_PROFILES), None)
            if other is not None:
                return (f"--profile: {other!r} is not a controller profile (its target is --target "
                        f"{'extension' if other == 'runtime_extension' else other}); choose from "
                        f"{', '.join(CONTROLLER_PROFILES)}")
            return f"--profile: {err}"
    if wall_budget is not None and not wall_budget > 0:
        return f"--wall-budget must be a positive number of seconds, not {wall_budget}"
    if not command:
        return f"--target {target} needs --command CMD"
    return command_problem("--command", command)


def _world(profiles: list[str], **clock: Any) -> World:
    """A world running every reference controller but those owning ``profiles``."""
    return World(controllers=controllers_besides(profiles), **clock)


def served_kubeconfig(world: World, user: str = MACHINE_CONTROLLER_USER) -> str:
    """The kubeconfig the command gets: every cluster of ``world`` (``management`` current), as
    ``user``. Call it from the server's thread once the world is served."""
    config = yaml.safe_load(world.clusters.kubeconfig())
    for entry in config["users"]:
        entry["user"] = {"token": user}
    return yaml.safe_dump(config, sort_keys=False)


def _rewrite(path: Path, text: str) -> None:
    # Atomically: the command may be reading it.
    scratch = path.with_suffix(".new")
    scratch.write_text(text)
    os.replace(scratch, path)


def _end_group(pid: int) -> None:
    """Kill whatever is left of the process group ``pid`` led (the command's children)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


# -- lockstep --------------------------------------------------------------------------------------------


class CommandProcess(ControllerProcess):
    """A :class:`ControllerProcess` running the command under test; stopping it ends its group too."""

    def _answer(self, timeout: float, what: str) -> dict[str, Any]:
        # A command that ended while a child of its still holds its stdout sends no end of input:
        # watch the command itself too, so its exit code is the verdict, not a timeout.
        deadline = time.monotonic() + timeout
        while not self._answers.qsize() and time.monotonic() < deadline:
            code = self._process.poll()
            if code is not None:
                threading.Event().wait(EXIT_GRACE_SECONDS)  # its last answer may still be on its way
                if not self._answers.qsize():
                    raise ControllerProcessError(f"the command under test ended (exit code {code}) before answering "
                                                 f"{what}; its stderr:\n{self._stderr_tail()}")
                break
            with self._answers.not_empty:  # (holds the queue's lock: look at its items directly)
                if not self._answers.queue:
                    self._answers.not_empty.wait(EXIT_POLL_SECONDS)
        return super()._answer(max(0.0, deadline - time.monotonic()), what)

    def stop(self, timeout: float = STOP_SECONDS, **options: Any) -> None:
        """Ask the command to stop (unless ``crash``), end its whole process group, then clean up as a
        :class:`ControllerProcess` does. The group goes first: a child of the command still holding its
        stdout would keep closing that pipe waiting."""
        if self._process.poll() is None and self.controllers is not None and not options.get("crash"):
            with contextlib.suppress(ControllerProcessError):
                self.request({"op": "stop"}, timeout)
        _end_group(self._process.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout)
        super().stop(timeout, **options)


class CommandProcesses(ControllerProcesses):
    """The command under test for one server, started one ahead as the reference controllers' processes
    are: the control protocol has a command connect to the server only at its first ``settle``
    (harness/client/remote.py), so the next scenario's command starts (the interpreter, its imports)
    while the current scenario runs, and its first ``settle`` finds the next world served."""

    def __init__(self, server: str, argv: list[str], *, profiles: list[str], user: str) -> None:
        super().__init__(server, only=reference_controllers(profiles))
        self.argv = argv
        self.user = user

    def start(self) -> ControllerProcess:
        return CommandProcess(self.server, only=self.only, user=self.user, command=self.argv,
                              kubeconfig=controller_kubeconfig(self.server, self.user))


class LockstepScene(ProcessScene):
    """A :class:`ProcessScene` whose controller process is the command under test, playing the
    controllers of ``profiles``, beside a world running the other reference controllers. With
    ``processes`` (for the same server, command and user) the command is taken from there, started
    ahead; without, it is started when the scene needs it."""

    def __init__(self, argv: list[str], *, server: WorldServer | None = None,
                 profiles: list[str] | None = None, user: str = MACHINE_CONTROLLER_USER,
                 processes: CommandProcesses | None = None) -> None:
        self._argv = argv
        self._user = user
        profiles = profiles or [PROFILE]
        world = _world(profiles)
        world.on_clusters_changed(lambda _name: _rewrite(self.process.kubeconfig_path,
                                                         served_kubeconfig(world, self._user)))
        if processes is not None and (processes.argv, processes.user) != (argv, user):
            processes = None
        super().__init__(world, server=server, only=reference_controllers(profiles), processes=processes)

    def _new_process(self) -> ControllerProcess:
        if self._processes is not None:
            return self._processes.take()
        return CommandProcess(self.server.base_url, only=self._only, user=self._user, command=self._argv,
                              kubeconfig=controller_kubeconfig(self.server.base_url, self._user))


# -- wall clock ------------------------------------------------------------------------------------------


class WallClockScene(HttpScene):
    """A scene whose world follows wall time, with the command under test as a plain process (see the
    module docstring): settled by quiet, advanced by waiting, within :data:`WALL_BUDGET_SECONDS`."""

    def __init__(self, argv: list[str], *, server: WorldServer | None = None, profiles: list[str] | None = None,
                 user: str = MACHINE_CONTROLLER_USER, wall_budget: float = WALL_BUDGET_SECONDS) -> None:
        self._profiles = profiles or [PROFILE]
        self._user = user
        self._budget = wall_budget
        world = _world(self._profiles, start=time.time(), follow_wall_time=True)
        self._dir = Path(tempfile.mkdtemp(prefix="lifecycle-tck-controller-"))
        self.kubeconfig = self._dir / "kubeconfig"
        self.log = self._dir / "controller.log"
        self._process: subprocess.Popen[bytes] | None = None
        world.on_clusters_changed(lambda _name: _rewrite(self.kubeconfig, served_kubeconfig(world, self._user)))
        super().__init__(world, server=server)
        self.kubeconfig.write_text(controller_kubeconfig(self.server.base_url, self._user))
        self._argv = argv
        self._used = 0.0
        self._quiet_total = -1
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-LOG_TAIL:]
        except OSError:
            return ""

    def _start(self) -> None:
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig)}
        with self.log.open("ab") as sink:
            try:
                self._process = subprocess.Popen(self._argv, stdin=subprocess.DEVNULL, stdout=sink,
                                                 stderr=subprocess.STDOUT, env=env, start_new_session=True)
            except OSError as err:
                raise MachineControllerError(f"the command {shlex.join(self._argv)} could not be started: {err}") \
                    from None
        deadline = time.monotonic() + READY_SECONDS
        resources = {r for p in self._profiles for r in PROFILE_RESOURCES.get(p, ())}
        while not any(s["user"] == self._user and s["resource"] in resources and not s["ended"]
                      for s in self._get("/watches")["items"]):
            self._check_alive()
            if time.monotonic() > deadline:
                raise MachineControllerError(f"the command did not start watching {', '.join(sorted(resources))} "
                                             f"within {READY_SECONDS:.0f} s; its log:\n{self._log_tail()}")
            threading.Event().wait(TICK_SECONDS)

    def _check_alive(self) -> None:
        if self._process is not None and self._process.poll() is not None:
            raise MachineControllerError(f"the controller under test ended with exit code "
                                         f"{self._process.returncode}; its log:\n{self._log_tail()}")

    def _tick(self) -> None:
        # The world follows wall time, but only runs its due work when asked (or written to).
        self._now = float(self._post("/clock/advance", {"seconds": 0})["unix"])

    def _total(self) -> int:
        return int(self._get("/audit", {"since": str(max(self._quiet_total, 0)), "diff": "false"})["total"])

    def _flushed(self) -> bool:
        return all(s["ended"] or s.get("written", s["events"]) >= s["events"] for s in self._get("/watches")["items"])

    def settle(self) -> None:
        """Tick the world, then wait (wall time, bounded) until no write lands for QUIET_SECONDS and
        every watch stream is written out."""
        deadline = time.monotonic() + SETTLE_SECONDS
        self._tick()
        total, since = self._total(), time.monotonic()
        while True:
            self._check_alive()
            threading.Event().wait(TICK_SECONDS)
            self._tick()
            now_total = self._total()
            if now_total != total:
                total, since = now_total, time.monotonic()
            elif time.monotonic() - since >= QUIET_SECONDS and self._flushed():
                self._quiet_total = total
                return
            if time.monotonic() > deadline:
                raise MachineControllerError(f"the world did not get quiet within {SETTLE_SECONDS:.0f} s: writes "
                                             f"kept landing ({total} so far); the log:\n{self._log_tail()}")

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass in wall time, or stop the scenario as not applicable when its virtual
        time would exceed the wall budget (it did not run: the verdict is INCOMPLETE)."""
        seconds = max(0.0, seconds)
        if self._used + seconds > self._budget:
            pytest.skip(
                f"{NOT_APPLICABLE_SKIP}the scenario lets more than {self._budget:.0f} s of virtual time pass "
                f"(this step {seconds:.0f} s, after {self._used:.0f} s); a controller on wall time "
                f"cannot be driven faster than the clock (run it with --stdio-control, or raise --wall-budget)"
            )
        self._used += seconds
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self._check_alive()
            threading.Event().wait(min(TICK_SECONDS, max(0.0, end - time.monotonic())))
            self._tick()
        self.settle()

    def restart_controllers(self, names: list[str] | None = None) -> None:
        """Restart controllers: the command (killed as a crash would, then started again) when any of
        ``names`` is one it plays; the others through the admin API."""
        played = reference_controllers(self._profiles)
        others = None if names is None else [name for name in names if name not in played]
        if others is None or others:
            super().restart_controllers(others)
        if names is None or any(name in played for name in names):
            process, self._process = self._process, None
            if process is not None:
                _end_group(process.pid)
                process.wait(STOP_SECONDS)
            self._start()

    def close(self) -> None:
        """End the command and its process group, then close as an :class:`HttpScene` does."""
        process, self._process = self._process, None
        try:
            if process is not None:
                _end_group(process.pid)
                process.wait(STOP_SECONDS)
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)
            super().close()


def target_profiles(config: pytest.Config) -> list[str]:
    """The profiles the controller under test claims: ``--profile`` for ``controller``,
    ``machine_controller`` for its alias."""
    if config.getoption("--target") == CONTROLLER_TARGET:
        return list(config.getoption("--profile") or [])
    return [PROFILE]


def command_processes(request: pytest.FixtureRequest) -> Iterator[CommandProcesses | None]:
    """The command under test started one ahead (``--stdio-control``; None otherwise), for the session
    (for features/conftest.py); the spare left at the end is stopped."""
    config = request.config
    command = config.getoption("--controller-command")
    if not config.getoption("--stdio-control") or not command or check_options(
            command, config.getoption("--target"), target_profiles(config), config.getoption("--wall-budget")):
        yield None
        return
    user = UNDER_TEST_USER if config.getoption("--target") == CONTROLLER_TARGET else MACHINE_CONTROLLER_USER
    server = request.getfixturevalue("world_server")
    processes = CommandProcesses(server.base_url, shlex.split(command), profiles=target_profiles(config), user=user)
    yield processes
    processes.close()


def machine_controller_scene(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The scene of a scenario under ``--target controller`` or ``machine-controller`` (for
    features/conftest.py)."""
    config = request.config
    command = config.getoption("--controller-command")
    target = config.getoption("--target")
    profiles = target_profiles(config)
    problem = check_options(command, target, profiles, config.getoption("--wall-budget"))
    if problem:
        pytest.fail(problem, pytrace=False)
    server = request.getfixturevalue("world_server")
    user = UNDER_TEST_USER if target == CONTROLLER_TARGET else MACHINE_CONTROLLER_USER
    argv = shlex.split(command)
    if config.getoption("--stdio-control"):
        processes = request.getfixturevalue("command_processes")
        scene: Any = LockstepScene(argv, server=server, profiles=profiles, user=user, processes=processes)
    else:
        scene = WallClockScene(argv, server=server, profiles=profiles, user=user,
                               wall_budget=config.getoption("--wall-budget") or WALL_BUDGET_SECONDS)
    with scene:
        yield scene
