"""Designs that fix each reviewer's total in a session: pairwise verdicts (win 1, tie 0.5,
loss 0: every call's two scores add up to 1), rankings (1..k add up to k(k+1)/2), points
shared out among the answers. Whatever the reviewer thinks, its scores of a session add up
to a number the design sets, so those totals carry no information. Everything estimated
from them is fixed by the design: reviewer severity (a reviewer's level is its total), and
any pull of one answer's score on the others' (they are its complement). Estimated as usual,
such an effect is 0 plus floating-point noise, whose standard error is noise of the same
size: tests of it flagged 89 of 100 null pairwise reports.

``fixed_totals`` finds the design from the data: every (session, reviewer) group of two or
more scores of a given size adds up to one total. The joint model then compares answers
within those groups (a fixed effect per group instead of per session), which leaves out
exactly what the totals would say, and the effects that live only in the totals are not
identified.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.stats.answers import answer_index
from council_db.analysis.stats.unique_rows import distinct

TOLERANCE = 1e-9  # relative to the largest score: totals closer than this are one total


@dataclass(frozen=True)
class FixedTotals:
    """Per record, its (session, reviewer) group, and the totals the design sets."""

    group: np.ndarray  # per record: its group's number (groups of one score included)
    totals: dict[int, float]  # scores in a group -> the total every such group adds up to
    pairwise: bool = False  # every session compares two answers (pairwise verdicts), not a ranking of more

    @property
    def label(self) -> str:
        """What the report prints for an effect the design leaves unidentified."""
        return f"not identified ({'pairwise' if self.pairwise else 'fixed totals'})"

    def reason(self) -> str:
        """Why, in words: e.g. "... (2 scores add up to 1; 4 scores add up to 2, ...)"."""
        totals = "; ".join(f"{size} scores add up to {total:g}" for size, total in sorted(self.totals.items()))
        return (f"every reviewer's scores of a session add up to the same total ({totals}, as pairwise verdicts, "
                "rankings or shared-out points do): the design fixes those totals")


def fixed_totals(data: ScoreData) -> FixedTotals | None:
    """The design's fixed totals, or None when the reviewers' totals vary (scores given freely).
    Needs two groups of one size adding up alike: one group alone is no evidence of a design."""
    if not data.n_records:
        return None
    _, group = np.unique(data.session * len(data.reviewers) + data.reviewer, return_inverse=True)
    group = group.reshape(-1)
    size = np.bincount(group)
    total = np.bincount(group, weights=data.score)
    scored = size >= 2
    if not scored.any():
        return None
    tolerance = TOLERANCE * max(1.0, float(np.abs(data.score).max()))
    totals = {}
    for n in distinct(size[scored]).tolist():
        these = total[size == n]
        if these.max() - these.min() > tolerance * n:
            return None
        totals[n] = float(these.mean())
    if not (np.bincount(size[scored]) >= 2).any():
        return None
    first_records = answer_index(data.session, data.model, data.log_length)[1]
    answers_per_session = np.bincount(data.session[first_records])
    return FixedTotals(group, totals, pairwise=bool(answers_per_session.max() <= 2))
