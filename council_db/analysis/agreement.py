"""Inter-reviewer agreement over the window: Krippendorff's alpha over candidate answers, with a
CI from resampling whole sessions. Self-reviews are left out by default: a reviewer scoring
its own answer is data about self-preference, not a view on the answer."""

from __future__ import annotations

import numpy as np

from council_db.analysis.score_data import ScoreData
from council_db.analysis.stats.agreement import answer_agreement
from council_db.analysis.stats.bootstrap import RngLike
from council_db.analysis.stats.estimate import Estimate


def agreement(data: ScoreData, n_boot: int = 1000, rng: RngLike = None, level: float = 0.95,
              include_self: bool = False) -> Estimate:
    """Krippendorff's alpha over the window's candidate answers, CI by session bootstrap."""
    keep = np.ones(data.n_records, dtype=bool) if include_self else ~data.self_review
    return answer_agreement(data.session[keep], data.model[keep], data.log_length[keep], data.score[keep],
                            data.n_sessions, n_boot, rng, level)
