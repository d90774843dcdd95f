"""Measuring: best-of-N wall time of a callable, and the printing of ratios."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(fn: Callable[[], object], repeat: int = 5, number: int = 1) -> float:
    """The fastest of ``repeat`` runs of ``number`` calls, in seconds per call."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def report(name: str, value: float, unit: str, baseline: float | None = None, baseline_name: str = "") -> str:
    """One line: the figure, and its ratio to the baseline when there is one."""
    line = f"{name:<58} {value:>12.3f} {unit}"
    if baseline:
        line += f"   ratio {value / baseline:>8.2f}x {baseline_name}"
    print(line, flush=True)
    return line
