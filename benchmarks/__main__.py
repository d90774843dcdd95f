"""``python -m benchmarks``: run every benchmark and print its figures."""

from __future__ import annotations

from benchmarks import addons, apiserver, conformance, http, machine, rollout, runtime, targets, waits


def main() -> None:
    apiserver.main()
    http.main()
    machine.main()
    rollout.main()
    runtime.main()
    addons.main()
    waits.main()
    conformance.main()
    targets.main()


if __name__ == "__main__":
    main()
