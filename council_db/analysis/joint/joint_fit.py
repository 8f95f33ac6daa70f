"""What a joint-model fit gives the analyses (``JointFit``), and the small steps the dense fit
(joint_model) and the absorbed fit of wide panels (absorbed_fit) share."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from council_db.analysis.joint.fixed_totals import FixedTotals
from council_db.analysis.joint.least_squares import Effect, WaldTest
from council_db.analysis.joint.residual_means import ResidualProjection
from council_db.analysis.loading.score_data import ScoreData

ROUNDING = 1e-9  # a residual this small, relative to the scores' spread, is floating-point noise


@dataclass
class JointFit:
    severity: dict[str, Effect]  # reviewer -> points vs the average reviewer (of its group)
    quality: dict[str, Effect]  # candidate model -> points vs the average model (of its group)
    slot_effects: dict[int, Effect]  # display slot -> points vs the average slot
    position_test: WaldTest | None  # all slot effects zero; None without slot effects
    length_per_log: Effect | None  # points per unit of log(chars + 1), within model: the common slope
    length_per_sd: Effect | None  # points per sample SD of log length (SD treated as fixed)
    length_by_reviewer: dict[str, Effect]  # reviewer with its own slope -> points per unit of log length
    self_preference: Effect | None  # unweighted mean of the identified per-reviewer terms
    self_preference_by_reviewer: dict[str, Effect]
    residual_sd_by_reviewer: dict[str, float]
    residuals: np.ndarray  # aligned with the data; NaN for records the fit could not use
    n_sessions: int  # sessions used (with >= 2 records) = clusters G
    n_records: int  # records used = N
    df: int  # degrees of freedom of every t / F denominator: G - 1
    warnings: list[str] = field(default_factory=list)
    groups: list[tuple[list[str], list[str]]] = field(default_factory=list)  # (reviewers, models) per group
    not_identified: list[str] = field(default_factory=list)  # effects reported as NaN / None
    fixed_totals: FixedTotals | None = None  # the design fixes each reviewer's total in a session
    projection: ResidualProjection | None = None  # what residual means' SEs need (affinity)
    absorbed: bool = False  # a wide panel's fit (absorbed_fit), not the dense one
    too_few: list[str] = field(default_factory=list)  # absorbed: subjects under its floor, no estimate


def per_sd(effect: Effect, sd: float) -> Effect:
    """A length effect per unit of log length restated per SD of log length (the SD taken as
    fixed: p unchanged)."""
    return Effect(effect.estimate * sd, effect.se * sd, effect.ci_low * sd, effect.ci_high * sd, effect.p_value)


def centred_where_known(log_len: np.ndarray, sized: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """Log length centred within each fixed-effect group (a session) over the answers whose
    length is known, 0 where it is not: the length term then rests on known lengths alone (a
    session with none adds nothing to it), and an unknown length claims no answer is longer or
    shorter than average."""
    count = np.bincount(unit[sized], minlength=int(unit.max()) + 1)
    total = np.bincount(unit[sized], weights=log_len[sized], minlength=len(count))
    centred = np.zeros(len(log_len))
    centred[sized] = log_len[sized] - (total / np.maximum(count, 1))[unit[sized]]
    return centred


def scale_use(data: ScoreData, rev: np.ndarray, e: np.ndarray, leverage: np.ndarray) -> dict[str, float]:
    n_rev = len(data.reviewers)
    rss = np.bincount(rev, weights=e * e, minlength=n_rev)
    dof = np.bincount(rev, weights=1.0 - leverage, minlength=n_rev)
    present = np.bincount(rev, minlength=n_rev) > 0
    return {data.reviewers[r]: (math.sqrt(rss[r] / dof[r]) if dof[r] > 1e-9 else math.nan)
            for r in np.flatnonzero(present).tolist()}


def rounding_noise_removed(residuals: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Residuals with floating-point noise set to 0. Where the model fits the scores exactly
    (a noise-free log), residuals are ~1e-16 and their tests would read noise as an effect
    (an affinity of 5.6e-17 was flagged); nothing 1e-9 of the scores' spread is a finding."""
    spread = float(np.ptp(y)) if len(y) else 0.0
    return np.where(np.abs(residuals) <= ROUNDING * max(spread, 1.0), 0.0, residuals)
