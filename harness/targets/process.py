"""The reference controllers as a separate process, and a scene that settles a world together with it.

:class:`ControllerProcess` runs ``python -m controllers --control stdio`` against a served world and
speaks the JSON-line protocol of :mod:`harness.client.remote` with it: the process does nothing until
asked, and answers a ``settle`` once its controllers have read every event the server sent them and
have nothing left to do at that instant.

:class:`ProcessScene` is an :class:`~harness.world.http_scene.HttpScene` whose world runs no reference
controller in-process (the world keeps the simulators, providers and the kinds' admission plugins);
the controllers run in the process. Moving time is a conversation between the two:

1. the world advances towards the target, but stops at the first instant at which anything was
   written, and never past the process's next timer (``POST /harness/v1/clock/advance`` with
   ``to`` and ``stopAfterWrite``);
2. the process moves its clock to that instant, catches up with the events and settles (its own
   writes settle the world, request by request, and come back to it as events, which it waits for
   before its next step, harness/client/remote.py); when nothing was
   written on the way (only its own timer fell due) it is told so (``"unchanged"``), and may keep what
   it read at its last answer (harness/client/cache.py);
3. until the target is reached.

So every write reaches the controllers at the virtual instant it happened, and their requeue timers
fire at theirs: the process sees the same sequence of states an in-process controller sees, and a
scenario's outcome does not depend on the machine's speed. Wall-clock bounds (start, each answer,
stop) only turn a hung process into a clear failure.
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

import yaml

from harness.resources import import_root
from harness.world.http_scene import HttpScene, WorldServer
from harness.world.world import REFERENCE_CONTROLLERS, World

# Who the process is on the wire: the facade takes a bearer token as the user's name.
CONTROLLER_USER = "system:serviceaccount:lifecycle-tck:reference-controllers"
START_SECONDS = 30.0
ANSWER_SECONDS = 60.0
STOP_SECONDS = 10.0
STDERR_TAIL = 4000


def command_problem(option: str, command: str) -> str | None:
    """What is wrong with the command line ``command`` given as ``option`` (None: nothing): it must
    parse as a shell would split it, and its program must be found and executable."""
    try:
        argv = shlex.split(command)
    except ValueError as err:
        return f"{option} {command!r} does not parse: {err}"
    if not argv:
        return f"{option} is empty"
    if shutil.which(argv[0]) is None:
        return f"{option}: the program {argv[0]!r} is not found or not executable"
    return None


def controller_kubeconfig(server: str, user: str = CONTROLLER_USER) -> str:
    """A kubeconfig for the management cluster at ``server``, acting as ``user``."""
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "management", "cluster": {"server": server}}],
        "users": [{"name": "controllers", "user": {"token": user}}],
        "contexts": [{"name": "management", "context": {"cluster": "management", "user": "controllers"}}],
        "current-context": "management",
    }, sort_keys=False)


class ControllerProcessError(RuntimeError):
    """The controller process failed to start, answered with an error, or did not answer in time."""


class ControllerProcess:
    """``python -m controllers --control stdio`` against the management cluster at ``server``.

    ``only``: controller names (default: all the registry lists). The process starts at once and
    connects to the server at its first request (so it can be started ahead of the world it will
    serve: :class:`ControllerProcesses`); the first request waits for it to be ready. :meth:`stop`
    ends it."""

    def __init__(self, server: str, *, only: list[str] | None = None, user: str = CONTROLLER_USER,
                 command: list[str] | None = None, kubeconfig: str | None = None) -> None:
        # ``command``/``kubeconfig``: a third-party controller speaking the same protocol
        # (harness/targets/machine_controller.py) runs instead, in a session of its own (stop ends
        # its whole group), finding the kubeconfig text given through KUBECONFIG.
        self._dir = Path(tempfile.mkdtemp(prefix="lifecycle-tck-controllers-"))
        self.kubeconfig_path = self._dir / "kubeconfig"
        self.kubeconfig_path.write_text(kubeconfig or controller_kubeconfig(server, user))
        argv = [sys.executable, "-m", "controllers", "--kubeconfig", str(self.kubeconfig_path), "--control", "stdio"]
        if only and command is None:
            argv += ["--only", ",".join(only)]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(import_root()), env.get("PYTHONPATH", "")) if p)
        env["KUBECONFIG"] = str(self.kubeconfig_path)
        self._stderr = (self._dir / "stderr").open("w+")
        try:
            self._process = subprocess.Popen(
                command or argv, cwd=import_root(), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self._stderr, text=True, bufsize=1, start_new_session=command is not None,
            )
        except OSError as err:
            self._stderr.close()
            shutil.rmtree(self._dir, ignore_errors=True)
            raise ControllerProcessError(f"{' '.join(command or argv)} could not be started: {err}") from None
        self._answers: queue.Queue[str | None] = queue.Queue()
        assert self._process.stdout is not None
        self._reader = threading.Thread(target=self._read, args=(self._process.stdout,), daemon=True,
                                         name="controller process answers")
        self._reader.start()
        self.controllers: list[str] | None = None
        self.errors: list[str] = []
        # When the process next retries something that failed (from its last settle answer).
        self.retry_due: float | None = None

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self._answers.put(line)
        self._answers.put(None)

    def _stderr_tail(self) -> str:
        self._stderr.flush()
        self._stderr.seek(0)
        return self._stderr.read()[-STDERR_TAIL:]

    def _answer(self, timeout: float, what: str) -> dict[str, Any]:
        try:
            line = self._answers.get(timeout=timeout)
        except queue.Empty:
            raise ControllerProcessError(
                f"the controller process did not answer {what} within {timeout} s; its stderr:\n{self._stderr_tail()}"
            ) from None
        if line is None:
            self._process.wait(STOP_SECONDS)
            raise ControllerProcessError(
                f"the controller process ended (exit code {self._process.returncode}) before answering {what}; "
                f"its stderr:\n{self._stderr_tail()}"
            )
        answer = json.loads(line)
        if "error" in answer:
            raise ControllerProcessError(f"the controller process refused {what}: {answer['error']}")
        return dict(answer)

    def _ready(self) -> None:
        if self.controllers is None:
            self.controllers = list(self._answer(START_SECONDS, "that it is ready")["controllers"])

    def request(self, body: dict[str, Any], timeout: float = ANSWER_SECONDS) -> dict[str, Any]:
        """Send one request and return its answer; ControllerProcessError if it fails or times out."""
        self._ready()
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(json.dumps(body) + "\n")
            self._process.stdin.flush()
        except (BrokenPipeError, ValueError) as err:
            raise ControllerProcessError(f"the controller process is gone: {err}; its stderr:\n"
                                         f"{self._stderr_tail()}") from None
        return self._answer(timeout, json.dumps(body))

    def settle(self, now: float, *, unchanged: bool = False) -> float | None:
        """Let the controllers catch up and settle at the virtual instant ``now``; when their next
        timer is due (None: none). ``unchanged``: nothing was written in the world since the process's
        last answer (the protocol's hint, harness/client/remote.py)."""
        body: dict[str, Any] = {"op": "settle", "now": now}
        if unchanged:
            body["unchanged"] = True
        answer = self.request(body)
        self.errors.extend(answer.get("errors") or [])
        retry = answer.get("retryDue")
        self.retry_due = None if retry is None else float(retry)
        due = answer.get("nextDue")
        return None if due is None else float(due)

    def stop(self, timeout: float = STOP_SECONDS, *, crash: bool = False) -> None:
        """End the process and remove its files. A process that has started is asked to stop and,
        once it has said so, killed: its watch connections end at once (a Python process
        tearing down its threads would take longer, and has nothing left to save). With ``crash``
        it is killed without being asked, as a crashed controller manager would end."""
        try:
            if self._process.poll() is None:
                if self.controllers is not None and not crash:
                    try:
                        self.request({"op": "stop"}, timeout)
                    except ControllerProcessError:
                        pass  # it is killed below either way
                self._process.kill()
                self._process.wait(timeout)
            for stream in (self._process.stdin, self._process.stdout):
                if stream is not None:
                    stream.close()
        finally:
            self._stderr.close()
            shutil.rmtree(self._dir, ignore_errors=True)


class ControllerProcesses:
    """Controller processes for one server, started one ahead: while a scenario runs with one, the
    next one starts (Python's start-up and imports overlap the scenario). :meth:`close` stops the spare."""

    def __init__(self, server: str, *, only: list[str] | None = None) -> None:
        self.server = server
        self.only = only
        self._spare: ControllerProcess | None = None

    def start(self) -> ControllerProcess:
        """Start one process (not yet connected: it connects at its first ``settle``)."""
        return ControllerProcess(self.server, only=self.only)

    def take(self) -> ControllerProcess:
        """A process not yet connected (the spare, if one is ready), and a new spare behind it."""
        process = self._spare if self._spare is not None else self.start()
        self._spare = self.start()
        return process

    def close(self) -> None:
        if self._spare is not None:
            self._spare.stop()
            self._spare = None


class ProcessScene(HttpScene):
    """A scene whose world is served over HTTP and whose reference controllers run as a separate
    process (see the module docstring). ``world`` must run no reference controller itself (default:
    a fresh world with every simulator and no controller); ``only``: the controllers the process
    runs (default: all); ``processes``: where to take the process from (for ``server``'s URL; by
    default one is started for this scene)."""

    def __init__(self, world: World | None = None, *, server: WorldServer | None = None,
                 only: list[str] | None = None, processes: ControllerProcesses | None = None) -> None:
        world = world if world is not None else World(controllers=[])
        both = [name for name in world.controller_names if only is None or name in only]
        if both:
            raise ValueError(f"the world runs reference controllers itself: {', '.join(both)}")
        super().__init__(world, server=server)
        if processes is not None and processes.server == self.server.base_url:
            self._processes: ControllerProcesses | None = processes
            self._only = processes.only
        else:
            self._processes, self._only = None, only
        try:
            self.process = self._new_process()
        except BaseException:
            super().close()
            raise
        self._process_due: float | None = None
        self._past_errors: list[str] = []

    def _new_process(self) -> ControllerProcess:
        if self._processes is not None:
            return self._processes.take()
        return ControllerProcess(self.server.base_url, only=self._only)

    def restart_controllers(self, names: list[str] | None = None) -> None:
        """Restart reference controllers (default: all). Those of the process run in one process, as one
        controller manager binary runs many (kube-controller-manager): restarting any of them kills that
        process, as a crash would (nothing is asked of it, nothing is saved), and a new process takes over;
        at the next settle it starts from a fresh list+watch at the current virtual instant. Those the
        world runs itself restart through the admin API, which answers 404 for a name nobody runs."""
        in_process = self._only or list(REFERENCE_CONTROLLERS)
        in_world = None if names is None else [name for name in names if name not in in_process]
        if in_world is None or in_world:
            super().restart_controllers(in_world)
        if names is None or any(name in in_process for name in names):
            self._past_errors.extend(self.process.errors)
            self.process.stop(crash=True)
            self.process = self._new_process()
            self._process_due = None

    def advance(self, seconds: float) -> None:
        self._run_until(self.now() + max(0.0, seconds))

    def _run_until(self, target: float) -> None:
        # First what happened at this instant (the scenario's own writes since the last settle).
        self._process_due = self.process.settle(self.now())
        while True:
            stop = target if self._process_due is None else min(target, self._process_due)
            answer = self._post("/clock/advance", {"to": stop, "stopAfterWrite": True})
            reached = self._now = float(answer["unix"])
            if answer["wrote"] or (self._process_due is not None and self._process_due <= reached):
                # Nothing written since the process last answered: only its own timer fell due.
                self._process_due = self.process.settle(reached, unchanged=not answer["wrote"])
            if reached >= target:
                return

    def retry_due(self) -> float | None:
        """When the controller process, or the served world, next retries something that failed."""
        dues = [due for due in (self.process.retry_due, super().retry_due()) if due is not None]
        return min(dues, default=None)

    @property
    def controller_errors(self) -> list[str]:
        """Reconcile failures the process's controllers have seen (retried, never fatal)."""
        return self._past_errors + list(self.process.errors)

    def close(self) -> None:
        """Stop the controller process, then close as an :class:`HttpScene` does (which checks that
        the server ended every stream, the process's included)."""
        try:
            self.process.stop()
        finally:
            super().close()
