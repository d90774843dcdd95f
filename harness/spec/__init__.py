"""The seeds' arithmetic as specification code: what any conforming implementation must compute.

The steps of ``features/`` use these functions to know the expected numbers (where a rollout must stop,
how far it may surge, how many disruptions a PodDisruptionBudget allows, which Pods a drain pass may
evict). They are written from the seeds, DESIGN.md's decisions and upstream's documented rules, and on
purpose NOT shared with the reference controllers under ``controllers/``, which keep their own
implementation mirroring upstream's code: the oracle and the reference then check each other instead of
sharing one bug (``.importlinter`` forbids ``controllers`` from importing this package and ``features``
and ``harness.targets`` from importing ``controllers``).

Modules: :mod:`harness.spec.rollout` (progress points, hook groups, surge and unavailable bounds),
:mod:`harness.spec.disruption` (PodDisruptionBudget arithmetic), :mod:`harness.spec.drain` (the order
and cadence of a Machine's drain).
"""
