"""A deliberately broken third-party controller: the reference controllers (``python -m controllers``)
with one plausible bug, chosen by the first argument, for ``lifecycle-tck conformance --target
controller``. The remaining arguments are ``python -m controllers``'s, for example:

    python examples/controller_broken/broken_controller.py no-pause --only deployment --control stdio

Each bug breaks one rule of one controller profile (README.md in this folder lists them with the exact
conformance command and the failure it gives). It patches the reference before it starts, so everything
else it does is right: the rule it breaks is the only reason for it to fail.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def _no_pause() -> None:
    """Rollouts (Deployment, StatefulSet, DaemonSet): keep scaling while a hook group runs."""
    from controllers.rollout import hooks

    evaluate = hooks.HookRunner.evaluate

    def keeps_going(self: hooks.HookRunner, *args: Any, **kwargs: Any) -> hooks.Gate:
        gate = evaluate(self, *args, **kwargs)
        if gate.running:
            gate.frozen = False
            gate.cap = None
        return gate

    hooks.HookRunner.evaluate = keeps_going  # type: ignore[method-assign]


def _no_wait_for_workers() -> None:
    """Cluster controller: delete the control plane without waiting for the worker Machines to go."""
    from controllers.cluster import deletion

    deletion.pending_names = lambda *_args: []  # type: ignore[assignment]


def _no_topology_gate() -> None:
    """Cluster controller: take apart a Cluster with a managed topology without waiting for ok-to-delete."""
    from controllers.cluster import deletion

    deletion.has_topology = lambda _cluster: False  # type: ignore[assignment]


def _delete_ignores_hook() -> None:
    """Topology controller (Runtime SDK client): call BeforeClusterDelete, then let the deletion go on
    whatever the extensions answered."""
    from controllers.topology import controller, hooks

    def reconcile_delete(self: controller.TopologyController, scope: controller.Scope) -> None:
        if not hooks.is_ok_to_delete(scope.cluster):
            self._call(scope, controller.BEFORE_CLUSTER_DELETE)
            hooks.mark_ok_to_delete(self.client, scope.cluster)

    controller.TopologyController._reconcile_delete = reconcile_delete  # type: ignore[assignment,method-assign]


def _ignore_dependents() -> None:
    """Add-on controller: remove a profile's add-ons without waiting for the profiles that depend on it."""
    from controllers.addons import controller

    controller.blocking_dependents = lambda *_args, **_kwargs: []  # type: ignore[assignment]


BUGS: dict[str, tuple[str, Callable[[], None]]] = {
    "no-pause": ("rollout_deployment, rollout_statefulset, rollout_daemonset", _no_pause),
    "no-wait-for-workers": ("cluster_controller", _no_wait_for_workers),
    "no-topology-gate": ("cluster_controller", _no_topology_gate),
    "delete-ignores-hook": ("topology_controller", _delete_ignores_hook),
    "ignore-dependents": ("addon_controller", _ignore_dependents),
}


def main(argv: list[str]) -> int:
    """Apply the bug named by ``argv[0]``, then run ``python -m controllers`` with the rest."""
    if not argv or argv[0] not in BUGS:
        choices = "\n".join(f"  {name:20} ({profiles})" for name, (profiles, _) in BUGS.items())
        print(f"usage: broken_controller.py BUG [python -m controllers options]\nBUG is one of:\n{choices}",
              file=sys.stderr)
        return 2
    BUGS[argv[0]][1]()
    from controllers.__main__ import main as run_controllers

    return run_controllers(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
