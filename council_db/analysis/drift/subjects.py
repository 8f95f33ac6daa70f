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
    return anchors_of_rows(estimates[None, :], cov, precision, df, alpha)[0]


def anchors_of_rows(estimates: np.ndarray, cov: np.ndarray, precision: np.ndarray, df: float,
                    alpha: float = ANCHOR_ALPHA) -> np.ndarray:
    """``anchors`` for each row of ``estimates`` (resamples of the same subjects, one shared
    ``cov``), all rows at once: one purification step drops one anchor from every row still
    purifying, so those rows hold equally many anchors and step together as one array."""
    rows, n = estimates.shape
    keep = np.ones((rows, n), dtype=bool)
    scale = np.sqrt(np.maximum(np.diag(cov), 1e-300))
    purifying = np.arange(rows)
    critical = _critical_t(alpha, df)
    for dropped in range((n - 1) // 2):
        kept = keep[purifying]
        values = estimates[purifying][kept].reshape(len(purifying), n - dropped)
        apart = np.abs(values - median_of_others(values)) / np.broadcast_to(scale, kept.shape)[kept].reshape(
            values.shape)
        furthest = np.flatnonzero(kept).reshape(values.shape)[np.arange(len(purifying)), np.argmax(apart, axis=1)]
        furthest -= np.arange(len(purifying)) * n  # flat positions to columns
        contrast = reference_contrasts(furthest, kept, precision)
        se = np.sqrt(np.maximum(np.einsum("ri,ri->r", contrast @ cov, contrast), 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            apart_enough = (se > 0) & (np.abs(np.einsum("ri,ri->r", contrast, estimates[purifying])) / se > critical)
        keep[purifying[apart_enough], furthest[apart_enough]] = False  # p < alpha
        purifying = purifying[apart_enough]
        if not len(purifying):
            break
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
    return reference_contrasts(np.array([j]), anchors[None, :], precision)[0]


def reference_contrasts(j: np.ndarray, anchors: np.ndarray, precision: np.ndarray) -> np.ndarray:
    """``reference_contrast`` row by row: subject j[r] against the anchors of row r."""
    rows = np.arange(len(j))
    weights = np.where(anchors, precision, 0.0)
    weights[rows, j] = 0.0
    contrast = -weights / weights.sum(axis=1, keepdims=True)
    contrast[rows, j] += 1.0
    return contrast
