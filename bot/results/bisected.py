"""What the bisect's re-runs say of a regression: a break they could not reproduce, or a flaky cell (docs/baseline.md, "Bisect")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bot.results.baseline import Measurement, Regression, outcome

FLAKY = "flaky"
NOT_REPRODUCIBLE = "not reproducible"


@dataclass(frozen=True)
class Unsettled:
    """A regression the bisect will not name a culprit for: a re-run disagreed with what main recorded."""

    kind: str  # FLAKY or NOT_REPRODUCIBLE
    commit: str  # where the re-runs disagreed
    where: str  # "last pass", "first failure" or "candidate"
    result: Measurement  # the re-run that disagreed (its message says how a pass failed)

    @property
    def verb(self) -> str:
        """What the re-run did, as in "the last pass X failed when re-run"."""
        return {"last pass": "failed", "first failure": "passed"}.get(self.where, "gave another result")


def unsettled(regression: Regression, measurements: Iterable[Measurement]) -> Unsettled | None:
    """The disagreement the bisect recorded at the regression's ends or between them, when there is one.

    The bisect re-runs the last pass and the first failure before it bisects, and the culprit and its
    parent once it has one; a re-run that disagrees is folded in as a flip (`flipped`, which says
    neither pass nor fail), so the range stays as main recorded it and this names why it has no culprit.
    """
    ends = {regression.good.commit: "last pass", regression.bad.commit: "first failure"}
    looked = {regression.good.commit, *regression.candidates}
    for m in measurements:  # newest first: the newest disagreement is the one told
        if m.source != "bisect" or not m.flipped or m.commit not in looked:
            continue
        where = ends.get(m.commit, "candidate")
        passed = outcome(m.result) is True
        kind = NOT_REPRODUCIBLE if where == "first failure" and passed else FLAKY
        return Unsettled(kind, m.commit, where, m)
    return None
