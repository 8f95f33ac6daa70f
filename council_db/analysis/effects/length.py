"""Length (verbosity) figures that need the window's records: each candidate answer's length
against its mean score (the unit the length-score correlation is about), and llm-council's
naive pooled r over every record, reported beside the honest headline.

The arrays are picked out of ``ScoreData`` here and the statistics left to stats/.
"""

from __future__ import annotations

import numpy as np

from council_db.analysis.loading.score_data import ScoreData, known_lengths
from council_db.analysis.stats.answers import AnswerTable, tabulate_answers
from council_db.analysis.stats.correlation import PooledSums, pooled_r_from_sums, pooled_r_over_records
from council_db.analysis.stats.estimate import Estimate


def answer_table(data: ScoreData, include_self: bool = False) -> AnswerTable:
    """Each answer's length and mean score over its reviewers; answers with no score left drop
    out, and so do answers whose length is unknown. Self-reviews are left out by default: they
    are data about self-preference, analysed apart, and would add that bias to the length analysis."""
    keep = known_lengths(data) if include_self else known_lengths(data) & ~data.self_review
    return tabulate_answers(data.session[keep], data.model[keep], data.log_length[keep], data.score[keep],
                            data.n_sessions)


def naive_pooled_r(data: ScoreData, level: float = 0.95) -> Estimate:
    """llm-council's pooled length-score correlation on these records (see
    ``pooled_r_over_records`` for exactly what it computes and why it is naive). ``se`` is on
    the Fisher z scale. All usable records count, self-reviews included, as in llm-council;
    unlike llm-council, ScoreData has already left out unscored (0.0) and out-of-scale
    scores, and here records whose length is unknown are left out too. Reported because users
    expect it, never as the headline."""
    if not isinstance(data, ScoreData):
        raise TypeError("naive_pooled_r takes the ScoreData: llm-council pools every record, not per-session r; "
                        "for the write-up's mean of per-session Fisher z use mean_fisher_z_r(r_s)")
    sized = known_lengths(data)
    if not sized.any():  # below llm-council's minimum: reported as missing
        return pooled_r_from_sums(PooledSums(0, 0.0, 0.0, 0.0), level, 0)
    if sized.all():
        return pooled_r_over_records(np.expm1(data.log_length), data.score, level, data.n_sessions)
    return pooled_r_over_records(np.expm1(data.log_length[sized]), data.score[sized], level,
                                 len(np.unique(data.session[sized])))
