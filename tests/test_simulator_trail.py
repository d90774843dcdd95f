"""The simulators' writes do not change when their per-event work is cut: a drain of 300 PDB-protected Pods
and 300 random pod creates, deletes, relabels and scalings give, write for write, the audit trail (verbs,
objects, bodies before and after) recorded on main before that work was cut (tests/audit_trail_scenario.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = Path(__file__).parent / "audit_trail_scenario.py"
FIXTURE = Path(__file__).parent / "fixtures" / "simulator_trail.json"


def test_simulators_write_the_recorded_audit_trail() -> None:
    # A process of its own: uids are seeded there before any World is built, and set order is fixed.
    # The checkout on the path: the scenario imports benchmarks/, which is not installed with the package.
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(SCENARIO)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout)
    want = json.loads(FIXTURE.read_text())
    for part in ("drain", "random"):
        mine, recorded = got[part]["digests"], want[part]["digests"]
        first = next((i for i, (a, b) in enumerate(zip(mine, recorded)) if a != b), None)
        assert first is None, f"{part}: record {first + 1} differs from the recorded trail"
        assert len(mine) == len(recorded), f"{part}: {len(mine)} records, {len(recorded)} recorded"
