"""Who a time or pair analysis is about: reviewers or candidate models, as codes and names.

A drift common to every reviewer cannot be told from a change in the questions (the session
effects absorb it), so time analyses are relative to the other subjects, in a way one
drifting subject cannot sway: slopes against the precision-weighted mean of the *anchors*
(the subjects not clearly apart, ``anchors``), change-point paths against the median path of
the others (``median_of_others``). Only subjects that share sessions share session effects:
``session_groups`` says which subjects can be told against which.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

import numpy as np

from council_db.analysis.loading.score_data import ScoreData

Kind = Literal["reviewer", "model"]
ANCHOR_ALPHA = 0.2


def codes_and_names(data: ScoreData, kind: Kind) -> tuple[np.ndarray, list[str]]:
    """Each record's subject code and the subjects' names."""
    if kind == "reviewer":
        return data.reviewer, data.reviewers
    return data.model, data.models


def session_groups(session: np.ndarray, subject: np.ndarray, n_subjects: int) -> np.ndarray:
    """Per subject: a label shared by the subjects connected to it through sessions (a reviewer
    with the reviewers of its sessions, and theirs, and on). Residuals are net of each
    session's effect, which holds the drift of the subjects in it, so a subject's drift can be
    told only against subjects of its own group: two councils that never share a session, or a
    23-minute judge run beside months of other data, each have their own typical subject."""
    label = np.arange(n_subjects)
    if not len(session):
        return label
    while True:  # each round joins groups one shared session further apart
        per_session = np.full(int(session.max()) + 1, n_subjects)
        np.minimum.at(per_session, session, label[subject])
        joined = label.copy()
        np.minimum.at(joined, subject, per_session[session])
        joined = joined[joined]  # a label's own label: chains shorten each round
        if (joined == label).all():
            return label
        label = joined


def median_of_others(values: np.ndarray) -> np.ndarray:
    """Along the last axis (subjects): for every subject j, the median of the other subjects'
    values. One sort: the i-th smallest of j's others is the (i+1)-th smallest of all when j's
    value is at or below the i-th smallest (ties give equal values either way), else the i-th."""
    n = values.shape[-1]
    ranked = np.sort(values, axis=-1)

    def other(i: int) -> np.ndarray:
        return np.where(values <= ranked[..., i:i + 1], ranked[..., i + 1:i + 2], ranked[..., i:i + 1])

    if (n - 1) % 2:
        return other((n - 2) // 2)
    return (other((n - 1) // 2 - 1) + other((n - 1) // 2)) / 2.0


def anchors(estimates: np.ndarray, cov: np.ndarray, precision: np.ndarray, df: float,
            alpha: float = ANCHOR_ALPHA) -> np.ndarray:
    """Which subjects make up "the typical subject" (a boolean mask): all of them, less those
    whose estimate is clearly apart from the others' (anchor purification, as in tests of
    differential item functioning). Repeatedly, the anchor furthest (in its own SEs) from the
    median of the other anchors, a choice one drifting subject cannot sway, is dropped when its
    contrast with the precision-weighted mean of the other anchors has two-sided p < ``alpha``;
    the anchors stay a strict majority (at most (n - 1) // 2 are dropped): drift is judged
    against most subjects. ``cov`` is the estimates' joint covariance, ``df`` the t degrees of
    freedom. A liberal ``alpha`` costs little: dropping a subject that does not drift leaves
    the others' contrasts unbiased, keeping one that does biases them all."""
    n = len(estimates)
    keep = np.ones(n, dtype=bool)
    scale = np.sqrt(np.maximum(np.diag(cov), 1e-300))
    for _ in range((n - 1) // 2):
        candidates = np.flatnonzero(keep)
        apart = np.abs(estimates[candidates] - median_of_others(estimates[candidates])) / scale[candidates]
        furthest = int(candidates[np.argmax(apart)])
        contrast = reference_contrast(furthest, keep, precision)
        se = float(np.sqrt(max(contrast @ cov @ contrast, 0.0)))
        if not (se > 0 and abs(float(contrast @ estimates)) / se > _critical_t(alpha, df)):  # p < alpha
            break
        keep[furthest] = False
    return keep


@lru_cache(maxsize=64)
def _critical_t(alpha: float, df: float) -> float:
    """|t| beyond which a two-sided p is below alpha: one quantile per window, not one
    p-value per purification step (the choice's resamples take hundreds of steps)."""
    from council_db.analysis.stats import t_quantile

    return t_quantile(1.0 - alpha, df)  # two-sided: P(|T| <= q) = 1 - alpha


def reference_contrast(j: int, anchors: np.ndarray, precision: np.ndarray) -> np.ndarray:
    """Weights c with c @ estimates == subject j's estimate minus the precision-weighted mean of
    the anchors other than j (fixed weights, so c @ cov @ c is the contrast's variance)."""
    weights = np.where(anchors, precision, 0.0)
    weights[j] = 0.0
    contrast = -weights / weights.sum()
    contrast[j] += 1.0
    return contrast
