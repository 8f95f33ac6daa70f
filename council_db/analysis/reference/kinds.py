"""What each reviewer is: a judge (an LLM, the default), a human rater or a gold label."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from council_db.analysis.loading.score_data import ScoreData

JUDGE, HUMAN, GOLD = "judge", "human", "gold"
KINDS = (JUDGE, HUMAN, GOLD)
REFERENCE_KINDS = (HUMAN, GOLD)


def reviewer_kinds(data: ScoreData, kinds: Mapping[str, str]) -> np.ndarray:
    """Each of ``data.reviewers``' kind (an array of strings): as ``kinds`` names it, a judge
    when it does not. A kind outside KINDS is a caller's mistake, not data: ValueError."""
    wrong = sorted({kind for kind in kinds.values() if kind not in KINDS})
    if wrong:
        raise ValueError(f"reviewer kinds must be one of {', '.join(KINDS)}; got {', '.join(wrong)}")
    return np.array([kinds.get(name, JUDGE) for name in data.reviewers], dtype=object)


def reviewers_of_kind(data: ScoreData, kinds: Mapping[str, str], kind: str) -> np.ndarray:
    """The reviewer codes of one kind, in name order."""
    return np.flatnonzero(reviewer_kinds(data, kinds) == kind)
