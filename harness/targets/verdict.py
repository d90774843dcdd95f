"""The verdict of a conformance run (DESIGN.md "Targets and verdicts"), per claimed profile and overall.

- CONFORMANT: every selected MUST scenario of the profile ran and passed (exit 0);
- NOT CONFORMANT: a MUST scenario failed (exit 1);
- INCOMPLETE: none failed, but some MUST scenario of the profile did not run (beyond the wall-clock
  budget, a capability the implementation does not claim, a scenario the target cannot drive, a skip),
  or none was selected at all (exit 3);
- a usage error (exit 2) never gets this far.

SHOULD and MAY scenarios are reported but do not decide the verdict. The selection (``--level``, ``-k``)
is the scope: a scenario the user left out is not counted as not run.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import (
    dataclass,
    field,
)
from typing import Any

CONFORMANT, NOT_CONFORMANT, INCOMPLETE = "CONFORMANT", "NOT CONFORMANT", "INCOMPLETE"
EXIT_CODES = {CONFORMANT: 0, NOT_CONFORMANT: 1, INCOMPLETE: 3}
USAGE_ERROR_EXIT = 2
# Scenario statuses (harness/targets/report.py): what ran, and what did not although it applies.
PASSED, FAILED = "passed", "failed"
DID_NOT_RUN = ("skipped", "not-run")
NOTHING_SELECTED = "no MUST scenario of the profile was selected"
NOTHING_RAN = "no scenario ran"


@dataclass
class ProfileVerdict:
    """One profile's verdict, its MUST counts and why scenarios did not run (reason -> count)."""

    profile: str
    verdict: str
    passed: int = 0
    failed: int = 0
    not_run: int = 0
    reasons: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The shape written to conformance-results.yaml."""
        return {"verdict": self.verdict, "must": {"passed": self.passed, "failed": self.failed,
                                                  "not-run": self.not_run}, "not-run reasons": dict(self.reasons)}

    def line(self) -> str:
        """One line for the summary: the verdict, the counts, the reasons."""
        text = (f"{self.profile}: {self.verdict} ({self.passed} MUST passed, {self.failed} failed, "
                f"{self.not_run} did not run)")
        if self.reasons:
            text += "; did not run: " + "; ".join(f"{count} × {reason}" for reason, count in self.reasons.items())
        return text


@dataclass
class Verdict:
    """The run's verdict and each profile's."""

    verdict: str
    profiles: list[ProfileVerdict]
    reason: str = ""

    @property
    def exit_code(self) -> int:
        """0 CONFORMANT, 1 NOT CONFORMANT, 3 INCOMPLETE."""
        return EXIT_CODES[self.verdict]

    def line(self) -> str:
        """The verdict line of the summary."""
        parts = ", ".join(f"{p.profile} {p.verdict}" for p in self.profiles)
        return (f"Verdict: {self.verdict}" + (f" — {parts}" if parts else "")
                + (f" ({self.reason})" if self.reason else ""))


def _profile_verdict(profile: str, musts: list[dict[str, Any]]) -> ProfileVerdict:
    passed = sum(1 for s in musts if s["status"] == PASSED)
    failed = sum(1 for s in musts if s["status"] == FAILED)
    missing = [s for s in musts if s["status"] in DID_NOT_RUN]
    reasons = dict(Counter(str(s.get("reason") or s["status"]) for s in missing).most_common())
    if failed:
        verdict = NOT_CONFORMANT
    elif missing or not musts:
        verdict = INCOMPLETE
    else:
        verdict = CONFORMANT
    if not musts:
        reasons = {NOTHING_SELECTED: 1}
    return ProfileVerdict(profile, verdict, passed, failed, len(missing), reasons)


def judge(scenarios: list[dict[str, Any]], claimed: tuple[str, ...] | list[str] | None) -> Verdict:
    """The verdict of ``scenarios`` (report entries) for a target claiming ``claimed`` profiles (None:
    every profile that has a scenario in the run, as the reference does)."""
    if claimed is None:
        profiles = sorted({p for s in scenarios if s["status"] != "not-applicable" and s.get("level") == "must"
                           for p in s.get("profile") or []})
    else:
        profiles = list(claimed)
    verdicts = [_profile_verdict(p, [s for s in scenarios if p in (s.get("profile") or [])
                                     and s.get("level") == "must" and s["status"] != "not-applicable"])
                for p in profiles]
    must_failed = any(s["status"] == FAILED and s.get("level") == "must" for s in scenarios)
    ran = any(s["status"] in (PASSED, FAILED) for s in scenarios)
    if must_failed or any(v.verdict == NOT_CONFORMANT for v in verdicts):
        return Verdict(NOT_CONFORMANT, verdicts)
    if not ran:
        return Verdict(INCOMPLETE, verdicts, NOTHING_RAN)
    if any(v.verdict == INCOMPLETE for v in verdicts):
        return Verdict(INCOMPLETE, verdicts)
    return Verdict(CONFORMANT, verdicts)
