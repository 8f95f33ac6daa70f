"""Pairwise verdicts drawn from a Bradley-Terry model, the model council-db's
``leaderboard --method bradley-terry`` fits, so a simulation can plant what it estimates.

For each call of two answers a and b (a reviewer seeing them in one display order), the
linear predictor is eta = quality[a] - quality[b] + slot_logit (+ if a was shown first, - if
second) + length_logit * (len_a - len_b) / (len_a + len_b) (Arena's normalised length
difference, on characters). The verdict for a is a symmetric cumulative logit on eta:
no ties (tie_band 0): a wins with probability F(eta), F the logistic; ties: Rao & Kupper's band,
a wins with F(eta - tie_band), loses with F(-eta - tie_band), ties otherwise; five levels
(strong_band set): thresholds -strong, -tie, tie, strong, a's result 0, 0.25, 0.5, 0.75 or 1
(B>>A ... A>>B, as arena-hard writes its verdicts); or Davidson's (1970) ties (davidson_tie
nu > 0): a wins, ties, loses in proportion e^(eta/2) : nu : e^(-eta/2), the other classic tie
model, for checking that the fit's Rao-Kupper ties do not mislead when the truth is Davidson's.
Every draw here comes after the rest of the session's, so a config without ``bradley_terry``
keeps its bytes.
"""

from __future__ import annotations

import numpy as np

QUARTERS = ("0.0", "0.25", "0.5", "0.75", "1.0")  # five-level verdicts as written


def thresholds(tie_band: float, strong_band: float | None) -> tuple[np.ndarray, np.ndarray]:
    """The cut points on the logit scale and each level's result for the first answer of a pair."""
    if strong_band is not None:
        return np.array([-strong_band, -tie_band, tie_band, strong_band]), np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    if tie_band > 0:
        return np.array([-tie_band, tie_band]), np.array([0.0, 0.5, 1.0])
    return np.array([0.0]), np.array([0.0, 1.0])


def verdicts(quality: np.ndarray, candidates: np.ndarray, lengths: np.ndarray, slot: np.ndarray, slot_logit: float,
             length_logit: float, tie_band: float, strong_band: float | None, rng: np.random.Generator,
             davidson_tie: float = 0.0) -> tuple[np.ndarray, np.ndarray | None]:
    """Each line's verdict as (tenths, quarters or None): columns 2i and 2i + 1 of
    ``candidates`` (n, k) are one call's two answers, ``slot`` (n, r, k) where each reviewer
    saw each; quarters (0..4) when the verdicts have five levels, whose 0.25 steps tenths cannot
    hold (tenths then hold the nearest tenth)."""
    a, b = candidates[:, 0::2], candidates[:, 1::2]
    len_a, len_b = lengths[:, 0::2].astype(np.float64), lengths[:, 1::2].astype(np.float64)
    shown_first = np.where(slot[..., 0::2] < slot[..., 1::2], 1.0, -1.0)
    eta = (quality[a] - quality[b] + length_logit * (len_a - len_b) / (len_a + len_b))[:, None, :] \
        + slot_logit * shown_first
    if davidson_tie > 0:
        values = np.array([0.0, 0.5, 1.0])
        loss, tie, win = np.exp(-eta / 2), np.full(eta.shape, davidson_tie), np.exp(eta / 2)
        below = np.stack([loss, loss + tie], axis=-1) / (loss + tie + win)[..., None]
    else:
        cuts, values = thresholds(tie_band, strong_band)
        below = 1.0 / (1.0 + np.exp(-(cuts - eta[..., None])))  # P(result <= level)
    level = (rng.random(eta.shape)[..., None] > below).sum(axis=-1)
    result = values[level]
    tenths = np.empty(slot.shape, dtype=np.int64)
    tenths[..., 0::2] = np.rint(result * 10).astype(np.int64)
    tenths[..., 1::2] = 10 - tenths[..., 0::2]
    if strong_band is None:
        return tenths, None
    quarters = np.empty(slot.shape, dtype=np.int64)
    quarters[..., 0::2], quarters[..., 1::2] = np.rint(result * 4), 4 - np.rint(result * 4)
    return tenths, quarters
