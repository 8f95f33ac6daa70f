"""A reviewer's severity at the window's end: when its severity drifts, the joint model's
severity is an average over the window and says little about the reviewer now.

The line: the reviewer's joint-model residuals on session time (least squares over its
records), through its window-average severity at its mean time (a reviewer's residuals sum
to 0 in the joint model, which holds a severity per reviewer), read at the window's last
time. Residuals are net of the session effects, which carry the average reviewer's drift, so
the slope is relative to the average reviewer, as severity is (not to the median other
reviewer, as the trend contrast is).

Uncertainty: var(severity) + (end - mean time)^2 x var(slope), the two taken as independent
(the slope comes from variation within the reviewer's records, the severity from their
level). The slope's variance is clustered by instant with the CR2 leverage correction and t
has (instants - 2) df, as the trend test's (see ``trends``). Records without a time are left
out of the line, not of the severity.
"""

from __future__ import annotations

import math

import msgspec
import numpy as np

from council_db.analysis.drift.trends import MIN_TIMES, PER_30_DAYS_US, TimedResiduals
from council_db.analysis.joint.least_squares import Effect
from council_db.analysis.stats.unique_rows import distinct


class RecentSeverity(msgspec.Struct, frozen=True):
    """Severity (points vs the average reviewer) at ``at_us``, the window's last time."""

    reviewer: str
    estimate: float
    se: float
    ci_low: float
    ci_high: float
    slope_per_30d: float  # vs the average reviewer
    at_us: int
    n_sessions: int
    n_records: int


def at_window_end(timed: TimedResiduals, severity: dict[str, Effect]) -> dict[str, RecentSeverity]:
    """Per reviewer with a finite severity and records at MIN_TIMES distinct times."""
    from council_db.analysis.stats import t_interval

    out: dict[str, RecentSeverity] = {}
    if timed.kind != "reviewer" or timed.n_instants < MIN_TIMES:
        return out
    end_us = int(timed.ts_us.max())
    instant = timed.session_instant[timed.session]
    for code, name in enumerate(timed.names):
        mine = timed.subject == code
        level = severity.get(name)
        if level is None or not level.identified or len(distinct(instant[mine])) < MIN_TIMES:
            continue
        t = timed.ts_us[mine] / PER_30_DAYS_US
        slope, slope_se = _line(t, timed.residual[mine], instant[mine])
        reach = end_us / PER_30_DAYS_US - t.mean()
        estimate = level.estimate + slope * reach
        se = math.sqrt(level.se ** 2 + (reach * slope_se) ** 2)
        low, high = t_interval(estimate, se, timed.n_instants - 2)
        out[name] = RecentSeverity(name, estimate, se, low, high, slope, end_us,
                                   int(len(distinct(timed.session[mine]))), int(mine.sum()))
    return out


def _line(t: np.ndarray, residual: np.ndarray, instant: np.ndarray) -> tuple[float, float]:
    """Least-squares slope of residual on t and its SE clustered by instant (CR2)."""
    dt = t - t.mean()
    sxx = float(dt @ dt)
    slope = float(dt @ (residual - residual.mean())) / sxx
    fitted = residual - residual.mean() - slope * dt
    _, cell = np.unique(instant, return_inverse=True)
    leverage = np.bincount(cell)[cell] * (1.0 / len(t) + dt * dt / sxx)
    room = 1.0 - leverage
    corrected = np.where(room > 1e-9, fitted / np.sqrt(np.maximum(room, 1e-9)), 0.0)
    per_instant = np.bincount(cell, weights=dt * corrected)
    return slope, math.sqrt(float(per_instant @ per_instant)) / sxx
