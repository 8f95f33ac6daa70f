"""Inter-reviewer agreement over the window: Krippendorff's alpha over candidate answers, with
reviewers as raters and a CI from resampling whole sessions; and, apart from it, the
self-consistency (test-retest) of reviewers that scored the same answer more than once.
Self-reviews are left out of alpha by default: a reviewer scoring its own answer is data about
self-preference, not a view on the answer. Repeats keep them: a constant self-preference
shifts both scores of a pair alike."""

from __future__ import annotations

import numpy as np

from council_db.analysis.loading.score_data import ScoreData, known_lengths
from council_db.analysis.stats.agreement import Agreement, Repeats, answer_agreement, retest
from council_db.analysis.stats.bootstrap import RngLike


def agreement(data: ScoreData, n_boot: int = 1000, rng: RngLike = None, level: float = 0.95,
              include_self: bool = False) -> Agreement:
    """Krippendorff's alpha between different reviewers of the window's answers, CI by session bootstrap."""
    keep = np.ones(data.n_records, dtype=bool) if include_self else ~data.self_review
    return answer_agreement(data.session[keep], data.model[keep], data.log_length[keep], data.reviewer[keep],
                            data.score[keep], n_boot, rng, level)


def self_consistency(data: ScoreData, n_boot: int = 1000, rng: RngLike = None, level: float = 0.95) -> Repeats:
    """Test-retest over every pair of scores one reviewer gave one answer, CIs by session bootstrap.
    Only answers of known length: without it, two answers of one model in one session (a
    regenerated answer graded again) cannot be told from one answer graded twice."""
    sized = known_lengths(data)
    return retest(data.session[sized], data.model[sized], data.log_length[sized], data.reviewer[sized],
                  data.score[sized], n_boot, rng, level)
