"""Could the judge replace a human rater? The alternative annotator test (stats/alt_test.py;
Calderon, Reichart & Dror, ACL 2025) on the window's human raters.

Two-candidate sessions: an instance is the pair, an annotation the verdict (three classes),
aligned by ``accuracy``. Sessions of three or more answers: an instance is an answer, an
annotation its score, aligned by ``neg_rmse`` (the authors' choice for numeric ratings), and
the answers of one item are one cluster. Instances need ``min_raters`` human raters (3 by
default, as the issue asks: with two, leaving one out leaves a single human, no consensus).
"""

from __future__ import annotations

import numpy as np

from council_db.analysis.reference.verdicts import Answers, Pairs
from council_db.analysis.stats.alt_test import ACCURACY, EPSILON, MIN_INSTANCES, MIN_RATERS, NEG_RMSE, AltTest, Q
from council_db.analysis.stats.alt_test import alt_test as run_alt_test
from council_db.analysis.stats.verdict_tables import verdict_class


def on_pairs(two: Pairs, judge: int, humans: np.ndarray, item: np.ndarray, epsilon: float = EPSILON,
             q: float = Q, min_raters: int = MIN_RATERS, min_instances: int = MIN_INSTANCES) -> AltTest:
    """The test over two-candidate pairs, verdicts as labels."""
    rated = two.verdicts[:, humans]
    instance, which = np.nonzero(np.isfinite(rated))
    judged = two.verdicts[:, judge]
    return run_alt_test(instance, humans[which], verdict_class(rated[instance, which]),
                        np.where(np.isfinite(judged), judged + 1.0, np.nan), metric=ACCURACY, epsilon=epsilon, q=q,
                        min_raters=min_raters, min_instances=min_instances, cluster=item[two.session])


def on_scores(found: Answers, use: np.ndarray, judge: int, humans: np.ndarray, item: np.ndarray,
              epsilon: float = EPSILON, q: float = Q, min_raters: int = MIN_RATERS,
              min_instances: int = MIN_INSTANCES) -> AltTest:
    """The test over the answers where ``use``, scores as values."""
    rated = found.scores[use][:, humans]
    instance, which = np.nonzero(np.isfinite(rated))
    return run_alt_test(instance, humans[which], rated[instance, which], found.scores[use, judge], metric=NEG_RMSE,
                        epsilon=epsilon, q=q, min_raters=min_raters, min_instances=min_instances,
                        cluster=item[found.session[use]])
