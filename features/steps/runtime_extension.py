"""Sentences about the Runtime Extension under test (the ``runtime_extension`` profile, features/runtime_extension/):
what it answers to discovery and to each hook's request, its certificate, and whether the Cluster lifecycle
run by the reference topology controller does what its answers say.

The Runtime Extension under test is, with ``--target extension``, the one at ``--extension-url``, whose
certificate the CA of ``--ca-file`` signs; otherwise the reference extension (``harness.world.extension``)
started on ``127.0.0.1:0`` for the scenario, with ``timeoutSeconds: 5``, answering as it does by default
except that the first call of each hook about each Cluster holds the lifecycle: a blocking hook answers
``retryAfterSeconds`` :data:`HELD_SECONDS`, a non-blocking one ``Failure`` (so both ways of holding are seen).

Its answers are not scripted: a scenario looks at what it answered. The harness's own calls ("the harness
asks", "the harness calls") go over HTTPS to its URL with the certificate checked against its CA
(harness/targets/extension.py); calls about a Cluster name ``lifecycle-tck-probe/probe``, which exists
nowhere. "the Cluster ... follows the answers ... to <Hook>" checks the topology controller against what
the extension answered, call by call (for the reference extension from its own record; for a third-party
one from the controller's transport, so the controller runs in this process).

PYTEST_DONT_REWRITE: a failing step's message is the verdict an extension's author reads.
"""

from __future__ import annotations

import json
import time
from collections.abc import (
    Callable,
    Iterator,
)
from dataclasses import (
    dataclass,
    field,
)
from typing import Any

import pytest
from pytest_bdd import (
    given,
    then,
    when,
)

from features.steps.context import (
    ScenarioContext,
    sentence,
)
from harness.kube.client import find_in
from harness.kube.names.capi import (
    CLUSTER_API_VERSION,
    CONTROL_PLANE_API_VERSION,
    TOPOLOGY_RECONCILE_FAILED_REASON,
    TOPOLOGY_RECONCILED,
    WAITING_FOR_BEFORE_DELETE_HOOK_REASON,
)
from harness.kube.names.runtime_sdk import (
    AFTER_CLUSTER_UPGRADE,
    AFTER_CONTROL_PLANE_INITIALIZED,
    AFTER_CONTROL_PLANE_UPGRADE,
    BEFORE_CLUSTER_CREATE,
    BEFORE_CLUSTER_DELETE,
    BEFORE_CLUSTER_UPGRADE,
    CATALOG,
    DISCOVERED,
    EXTENSION_CONFIG_KIND,
    FAILURE_POLICY_FAIL,
    OK_TO_DELETE_ANNOTATION,
    PENDING_HOOKS_ANNOTATION,
    RUNTIME_API_VERSION,
    STATUS_FAILURE,
    STATUS_SUCCESS,
)
from harness.kube.names.topology import (
    HOOK_BLOCKING,
    HOOK_BLOCKING_NO_MESSAGE,
    HOOK_BLOCKING_REASON,
)
from harness.targets.conformance import NOT_APPLICABLE_SKIP
from harness.targets.extension import (
    Discovery,
    ExchangeRecorder,
    HookCall,
    ca_bundle,
    call_handler,
    certificate_problem,
    check_extension_options,
    cluster_of,
    discover,
    handler_timeout,
    ignored,
    load_ca,
    response_problems,
)
from harness.world.extension import (
    ExtensionServer,
    HookResponder,
)

EXTENSION_TARGET = "extension"
PROCESS_TRANSPORT = "process"
REFERENCE_TIMEOUT_SECONDS = 5
HELD_SECONDS = 5
HELD_MESSAGE = "the reference extension holds {hook} once"
FAILED_MESSAGE = "the reference extension fails {hook} once"
# How long a Cluster's lifecycle may be held before the verdict is that the extension never lets it go.
HOLD_LIMIT_SECONDS = 3600.0
HOLD_LIMIT_ANSWERS = 40
# Wall-clock bound on one hook's check: an extension that answers slowly (up to its timeoutSeconds, 30 s
# at most) on every call would otherwise take up to HOLD_LIMIT_ANSWERS times that.
WALL_LIMIT_SECONDS = 180.0
# Virtual seconds between looks while a hook has not been called yet or its answer was an error.
LOOK_SECONDS = 5.0
DISCOVERY_SECONDS = 60.0
NOT_IN_PROCESS = ("--target extension needs the topology controller in this process (it reads the extension's "
                  "answers from the controller's calls): use --transport inprocess or http, not process")
GROUP_HOOK = '"{hook}.hooks.runtime.cluster.x-k8s.io"'


# -- the extension under test ------------------------------------------------------------------------------


@dataclass
class _HoldsOnce(HookResponder):
    """The reference extension's answers, except for the first call of each hook about each Cluster
    (see the module docstring)."""

    seen: set[tuple[str, str]] = field(default_factory=set)

    def answer(self, hook: str, handler: str, request: dict[str, Any], *more: Any) -> Any:
        cluster = cluster_of(request)
        if (cluster, hook) not in self.seen:
            self.seen.add((cluster, hook))
            first = ({"status": STATUS_SUCCESS, "retryAfterSeconds": HELD_SECONDS,
                      "message": HELD_MESSAGE.format(hook=hook)} if CATALOG[hook].retry
                     else {"status": STATUS_FAILURE, "message": FAILED_MESSAGE.format(hook=hook)})
            self.script(hook, response=first, cluster=cluster)
        else:
            self.script(hook, cluster=cluster)
        return super().answer(hook, handler, request, *more)


@dataclass
class ExtensionUnderTest:
    """The extension a scenario checks: where it is, its CA, what it was called with and answered, and
    what the steps learnt of it (the ExtensionConfig registering it, its discovery, the probe answers)."""

    url: str
    ca_pem: bytes
    ca_name: str
    recorded: Callable[[], list[HookCall]]
    config_name: str | None = None
    discovery: Discovery | None = None
    answers: list[tuple[dict[str, Any], HookCall]] = field(default_factory=list)

    def calls(self, hook: str, cluster: str) -> list[HookCall]:
        """The calls of ``hook`` about ``cluster`` (``namespace/name``), oldest first."""
        return [c for c in self.recorded() if c.hook == hook and c.cluster == cluster]

    def discovered(self) -> Discovery:
        if self.discovery is None:
            self.discovery = discover(self.url, self.ca_pem)
        return self.discovery


@pytest.fixture
def extension_under_test(request: pytest.FixtureRequest) -> Iterator[ExtensionUnderTest]:
    """The scenario's Runtime Extension under test (module docstring); what it started is stopped after."""
    if request.config.getoption("--target") == EXTENSION_TARGET:
        url, ca_file = request.config.getoption("--extension-url"), request.config.getoption("--ca-file")
        problem = check_extension_options(url, ca_file)
        if problem:
            pytest.fail(problem, pytrace=False)
        if request.config.getoption("--transport") == PROCESS_TRANSPORT:
            pytest.fail(NOT_IN_PROCESS, pytrace=False)
        recorder = ExchangeRecorder(url).start()
        try:
            yield ExtensionUnderTest(url, load_ca(ca_file), f"--ca-file {ca_file}", recorder.calls)
        finally:
            recorder.stop()
        return
    responder = _HoldsOnce(timeout_seconds=REFERENCE_TIMEOUT_SECONDS)
    server = ExtensionServer(responder).start()

    def recorded() -> list[HookCall]:
        return [HookCall(c.hook, c.handler, cluster_of(c.request), c.response,
                         None if c.response is not None else str(c.behaviour)) for c in responder.calls_of()]

    try:
        yield ExtensionUnderTest(server.url, server.ca.cert_pem, "the reference extension's CA", recorded)
    finally:
        server.stop()


def _split(ref: str) -> tuple[str, str]:
    namespace, _, name = ref.rpartition("/")
    return namespace or "default", name


def _discovered_condition(ctx: ScenarioContext, name: str) -> dict[str, Any] | None:
    config = find_in(ctx.client, RUNTIME_API_VERSION, EXTENSION_CONFIG_KIND, name)
    return next((c for c in ((config or {}).get("status") or {}).get("conditions") or []
                 if c.get("type") == DISCOVERED), None)


def _registered(ctx: ScenarioContext, ext: ExtensionUnderTest) -> list[dict[str, Any]]:
    """The handlers the ExtensionConfig registering ``ext`` lists."""
    assert ext.config_name is not None, "the extension under test is not registered in this scenario"
    config = find_in(ctx.client, RUNTIME_API_VERSION, EXTENSION_CONFIG_KIND, ext.config_name)
    return list(((config or {}).get("status") or {}).get("handlers") or [])


def _problems(lines: list[str]) -> str:
    return "\n  - ".join(["", *lines])


# -- Given / When ------------------------------------------------------------------------------------------


@given(sentence('the Runtime Extension under test registered with the ExtensionConfig "{name:Q}"'))
def given_registered(ctx: ScenarioContext, extension_under_test: ExtensionUnderTest, name: str) -> None:
    ext = extension_under_test
    config = {"apiVersion": RUNTIME_API_VERSION, "kind": EXTENSION_CONFIG_KIND, "metadata": {"name": name},
              "spec": {"clientConfig": {"url": ext.url, "caBundle": ca_bundle(ext.ca_pem)}}}
    ctx.setup(lambda: ctx.client.create(config))
    ext.config_name = name
    answered = ctx.wait_until(lambda: (_discovered_condition(ctx, name) or {}).get("status") in ("True", "False"),
                              DISCOVERY_SECONDS)
    assert answered, f"the ExtensionConfig {name} was not discovered within {DISCOVERY_SECONDS:.0f} s"
    condition = _discovered_condition(ctx, name) or {}
    assert condition.get("status") == "True", (
        f"the ExtensionConfig {name} for {ext.url} was not discovered: {condition.get('message')}")


@when(sentence("the harness asks the Runtime Extension under test for discovery"))
def when_discovery(ctx: ScenarioContext, extension_under_test: ExtensionUnderTest) -> None:
    extension_under_test.discovery = discover(extension_under_test.url, extension_under_test.ca_pem)


@when(sentence("the harness calls every handler the Runtime Extension under test advertises"))
def when_call_handlers(ctx: ScenarioContext, extension_under_test: ExtensionUnderTest) -> None:
    ext = extension_under_test
    discovery = ext.discovered()
    assert discovery.handlers, f"there is no handler to call: its discovery{_problems(discovery.problems)}"
    ext.answers = [(handler, call_handler(ext.url, ext.ca_pem, handler)) for handler in discovery.handlers]


# -- Then: the protocol ------------------------------------------------------------------------------------


@then(sentence("its discovery answer is a valid DiscoveryResponse"))
def then_valid_discovery(ctx: ScenarioContext, extension_under_test: ExtensionUnderTest) -> None:
    discovery = extension_under_test.discovered()
    answer = json.dumps(discovery.answer, sort_keys=True) if discovery.answer is not None else "none"
    assert not discovery.problems, (f"the discovery answer of {extension_under_test.url} is not a valid "
                                    f"DiscoveryResponse:{_problems(discovery.problems)}\nits answer: {answer}")


@then(sentence("every handler answered with a response of its hook's schema"))
def then_valid_answers(ctx: ScenarioContext, extension_under_test: ExtensionUnderTest) -> None:
    problems = []
    for _handler, call in extension_under_test.answers:
        if call.response is None:
            problems.append(f"{call.hook} handler {call.handler}: {call.error}")
            continue
        problems += [f"{call.hook} handler {call.handler} {p}: {json.dumps(call.response, sort_keys=True)}"
                     for p in response_problems(CATALOG[call.hook], call.response)]
    assert not problems, f"not every handler answered a valid response:{_problems(problems)}"


@then(sentence("every handler that answered Failure said why in its message"))
def then_failures_explained(ctx: ScenarioContext, extension_under_test: ExtensionUnderTest) -> None:
    silent = [f"{c.hook} handler {c.handler}" for _, c in extension_under_test.answers
              if c.status == STATUS_FAILURE and not str((c.response or {}).get("message") or "").strip()]
    assert not silent, f"these answered Failure without a message:{_problems(silent)}"


@then(sentence("every handler answered within its timeoutSeconds"))
def then_answered_in_time(ctx: ScenarioContext, extension_under_test: ExtensionUnderTest) -> None:
    late = []
    for handler, call in extension_under_test.answers:
        limit = handler_timeout(handler)
        if call.seconds > limit or (call.error or "").endswith("context deadline exceeded"):
            late.append(f"{call.hook} handler {call.handler} did not answer within its {limit} s "
                        f"(timeoutSeconds {handler.get('timeoutSeconds')}): {call.error or f'{call.seconds:.2f} s'}")
    assert not late, f"not every handler answered in time:{_problems(late)}"


@then(sentence("the certificate of the Runtime Extension under test verifies against its CA"))
def then_certificate(ctx: ScenarioContext, extension_under_test: ExtensionUnderTest) -> None:
    ext = extension_under_test
    problem = certificate_problem(ext.url, ext.ca_pem, ext.ca_name)
    assert problem is None, problem


@then(sentence('the ExtensionConfig "{name:Q}" lists every handler the Runtime Extension under test advertises'))
def then_registered_all(ctx: ScenarioContext, extension_under_test: ExtensionUnderTest, name: str) -> None:
    ext = extension_under_test
    advertised = sorted(f"{h['name']}.{name}" for h in ext.discovered().handlers)
    listed = sorted(str(h.get("name")) for h in _registered(ctx, ext))
    assert advertised and listed == advertised, (f"the ExtensionConfig lists {listed}; the extension advertises "
                                                 f"{advertised}")


# -- Then: the lifecycle -----------------------------------------------------------------------------------


@dataclass
class _Round:
    """One round of calls of a hook (every handler, in the order of their registered names, until the
    first error) and what the Runtime SDK makes of it."""

    calls: list[HookCall]
    held: bool
    blocking: bool
    retry: int
    message: str
    error: str | None

    def describe(self) -> str:
        return "; ".join(c.describe() for c in self.calls)


def _rounds(calls: list[HookCall], handlers: list[dict[str, Any]], config_name: str) -> list[_Round]:
    """The calls split into rounds, each judged as the Runtime SDK client aggregates it (reference §1.4, §1.5)."""
    ordered = sorted(handlers, key=lambda h: str(h.get("name")))
    policies = {str(h.get("name", "")).removesuffix("." + config_name): str(h.get("failurePolicy") or
                                                                           FAILURE_POLICY_FAIL) for h in ordered}
    first = str(ordered[0].get("name", "")).removesuffix("." + config_name) if ordered else None
    groups: list[list[HookCall]] = []
    for call in calls:
        if not groups or call.handler == first or first is None:
            groups.append([])
        groups[-1].append(call)
    out = []
    for group in groups:
        error, answers = None, []
        for call in group:
            if ignored(call, policies.get(call.handler, FAILURE_POLICY_FAIL)):
                continue
            if call.response is None:
                error = call.error
                break
            if call.status != STATUS_SUCCESS:
                error = f"status {json.dumps(call.status)}, message {json.dumps(call.response.get('message'))}"
                break
            answers.append(call)
        retries = [c.retry_after() for c in answers if c.retry_after()]
        message = ", ".join(str(c.response.get("message")) for c in answers if c.response and c.response.get("message"))
        retry = min(retries) if retries and error is None else 0
        out.append(_Round(group, error is not None or retry > 0, retry > 0, retry, message, error))
    return out


def _cluster(ctx: ScenarioContext, ref: str) -> dict[str, Any] | None:
    namespace, name = _split(ref)
    return find_in(ctx.client, CLUSTER_API_VERSION, "Cluster", name, namespace)


def _annotations(obj: dict[str, Any] | None) -> dict[str, str]:
    return ((obj or {}).get("metadata") or {}).get("annotations") or {}


def _pending(obj: dict[str, Any] | None) -> list[str]:
    return [h for h in _annotations(obj).get(PENDING_HOOKS_ANNOTATION, "").split(",") if h]


def _condition(obj: dict[str, Any] | None, kind: str, *, v1beta2: bool = False) -> dict[str, Any] | None:
    status = (obj or {}).get("status") or {}
    items = (status.get("v1beta2") or {}).get("conditions") if v1beta2 else status.get("conditions")
    return next((c for c in items or [] if c.get("type") == kind), None)


def _created(ctx: ScenarioContext, cluster: dict[str, Any] | None) -> bool:
    spec = (cluster or {}).get("spec") or {}
    return bool(spec.get("infrastructureRef") and spec.get("controlPlaneRef"))


def _control_plane_at_topology_version(ctx: ScenarioContext, cluster: dict[str, Any] | None) -> bool:
    if cluster is None:
        return False
    meta = cluster["metadata"]
    kcp = find_in(ctx.client, CONTROL_PLANE_API_VERSION, "KubeadmControlPlane", meta["name"], meta["namespace"])
    wanted = ((cluster.get("spec") or {}).get("topology") or {}).get("version")
    return kcp is not None and ((kcp.get("spec") or {}).get("version")) == wanted


# What each hook guards, and how to see that it went on.
_STEPS: dict[str, tuple[str, Callable[[ScenarioContext, dict[str, Any] | None], bool]]] = {
    BEFORE_CLUSTER_CREATE: ("the creation of the Cluster's infrastructure cluster and control plane", _created),
    AFTER_CONTROL_PLANE_INITIALIZED: ("clearing AfterControlPlaneInitialized from the pending hooks",
                                      lambda ctx, c: AFTER_CONTROL_PLANE_INITIALIZED not in _pending(c)),
    BEFORE_CLUSTER_UPGRADE: ("the control plane's upgrade to the topology version", _control_plane_at_topology_version),
    AFTER_CONTROL_PLANE_UPGRADE: ("clearing AfterControlPlaneUpgrade from the pending hooks (the workers' upgrade)",
                                  lambda ctx, c: AFTER_CONTROL_PLANE_UPGRADE not in _pending(c)),
    AFTER_CLUSTER_UPGRADE: ("clearing AfterClusterUpgrade from the pending hooks",
                            lambda ctx, c: AFTER_CLUSTER_UPGRADE not in _pending(c)),
    BEFORE_CLUSTER_DELETE: ("marking the Cluster ok to delete (its deletion)",
                            lambda ctx, c: c is None or OK_TO_DELETE_ANNOTATION in _annotations(c)),
}


def _hold_problem(hook: str, cluster: dict[str, Any] | None, held: _Round) -> str | None:
    """What the Cluster should say while ``held`` holds ``hook``, and does not (None: it says it)."""
    if hook == BEFORE_CLUSTER_DELETE:
        deleting = _condition(cluster, "Deleting", v1beta2=True) or {}
        if deleting.get("reason") != WAITING_FOR_BEFORE_DELETE_HOOK_REASON:
            return f"its Deleting condition is {deleting}, not reason {WAITING_FOR_BEFORE_DELETE_HOOK_REASON}"
        return None
    condition = _condition(cluster, TOPOLOGY_RECONCILED) or {}
    message = str(condition.get("message") or "")
    if held.blocking:
        wanted = HOOK_BLOCKING.format(hook=hook, message=held.message) if held.message \
            else HOOK_BLOCKING_NO_MESSAGE.format(hook=hook)
        says_it = condition.get("reason") == HOOK_BLOCKING_REASON and wanted in message
        if condition.get("status") != "False" or not says_it:
            return f"TopologyReconciled is {condition}, not False with reason {HOOK_BLOCKING_REASON} saying {wanted!r}"
        return None
    failure_message = next((str(c.response.get("message") or "") for c in held.calls
                            if c.response is not None and c.status != STATUS_SUCCESS), "")
    names_it = GROUP_HOOK.format(hook=hook) in message and failure_message in message
    reason = condition.get("reason")
    if condition.get("status") != "False" or reason != TOPOLOGY_RECONCILE_FAILED_REASON or not names_it:
        return (f"TopologyReconciled is {condition}, not False with reason {TOPOLOGY_RECONCILE_FAILED_REASON} "
                f"naming {hook} and {failure_message!r}")
    return None


@then(sentence('the Cluster "{ref:Q}" follows the answers of the Runtime Extension under test to {hook:Word}'))
def then_follows_answers(ctx: ScenarioContext, extension_under_test: ExtensionUnderTest, ref: str, hook: str) -> None:
    assert hook in _STEPS, f"a lifecycle hook is one of {list(_STEPS)}, not {hook!r}"
    ext = extension_under_test
    what, done = _STEPS[hook]
    namespace, name = _split(ref)
    handlers = [h for h in _registered(ctx, ext) if (h.get("requestHook") or {}).get("hook") == hook]
    if not handlers:
        # Nothing of the extension is checked here: the scenario did not run (the verdict says INCOMPLETE),
        # it did not pass.
        pytest.skip(f"{NOT_APPLICABLE_SKIP}the extension registers no handler for {hook}: how it answers "
                    f"{hook} cannot be checked")
    deadline = ctx.scene.now() + HOLD_LIMIT_SECONDS
    wall_deadline = time.monotonic() + WALL_LIMIT_SECONDS
    seen = 0
    while True:
        cluster = _cluster(ctx, ref)
        went_on = done(ctx, cluster)
        rounds = _rounds(ext.calls(hook, f"{namespace}/{name}"), handlers, ext.config_name or "")
        trail = "\n".join(f"  {i + 1}. {r.describe()}" for i, r in enumerate(rounds)) or "  (no call)"
        last = rounds[-1] if rounds else None
        if went_on:
            assert rounds, (f"{what} happened without {hook} being called, although the extension "
                            f"registered {[h.get('name') for h in handlers]} for it")
            assert last is None or not last.held, (f"{what} happened although the extension's last answer held it: "
                                                   f"{last.describe()}\ncalls of {hook}:\n{trail}")
            return
        if last is not None and not last.held:
            raise AssertionError(f"the extension let {hook} go ({last.describe()}), yet {what} did not happen"
                                 f"\ncalls of {hook}:\n{trail}")
        if last is not None:
            problem = _hold_problem(hook, cluster, last)
            assert problem is None, (f"while the extension held {hook} ({last.error or last.describe()}), "
                                     f"{problem}\ncalls of {hook}:\n{trail}")
        if last is None and ctx.scene.now() >= deadline:
            raise AssertionError(f"{what} did not happen within {HOLD_LIMIT_SECONDS:.0f} virtual seconds, and "
                                 f"{hook} was never called")
        if len(rounds) > HOLD_LIMIT_ANSWERS or ctx.scene.now() >= deadline:
            raise AssertionError(
                f"{what} did not happen within {HOLD_LIMIT_SECONDS:.0f} virtual seconds: the extension held {hook} "
                f"{len(rounds)} times (the harness's clock is virtual: an extension counting wall-clock time "
                f"sees its calls come at once)\ncalls of {hook}:\n{trail}")
        if time.monotonic() > wall_deadline:
            raise AssertionError(f"{what} did not happen within {WALL_LIMIT_SECONDS:.0f} s of wall time: the "
                                 f"extension's answers to {hook} are slow\ncalls of {hook}:\n{trail}")
        # A new blocking answer: the next call is due after its retryAfterSeconds; otherwise look again soon.
        step = float(last.retry) if last is not None and last.blocking and len(rounds) > seen else LOOK_SECONDS
        seen = len(rounds)
        ctx.scene.advance(step)

