"""``clustered.mean_figure`` for every group at once (each reviewer's raw mean score): one sort
of the records by (group, session) and sums over it, where a call per group cost a mask, a
bincount, a t p-value nobody reads and an interval each (a 50,000-reviewer panel's report: 11
of its 35 CPU seconds). Each group's mean, CR1 SE and t interval on its sessions - 1 degrees
of freedom are ``mean_figure``'s (to rounding: tests/analysis/stats/test_group_means.py)."""

from __future__ import annotations

import math

import msgspec
import numpy as np

from council_db.analysis.stats.clustered import CR1
from council_db.analysis.stats.estimate import Estimate
from council_db.analysis.stats.inference import t_quantile
from council_db.analysis.stats.unique_rows import unique_rows


class GroupMeans(msgspec.Struct, frozen=True):
    """Per group (index): its records, sessions, mean with CR1 SE and the SD of its values."""

    records: np.ndarray
    sessions: np.ndarray
    mean: np.ndarray
    se: np.ndarray  # NaN under 2 sessions
    sd: np.ndarray  # ddof 1; NaN under 2 records
    level: float

    def figure(self, group: int) -> Estimate:
        """Group ``group``'s mean as ``mean_figure`` states it: no p-value, its t interval."""
        g, mean, se = int(self.sessions[group]), float(self.mean[group]), float(self.se[group])
        if g == 0:
            return Estimate.missing(CR1, 0, self.level, p_value=None)
        if g < 2:
            return Estimate.missing(CR1, g, self.level, estimate=mean, p_value=None)
        q = t_quantile(self.level, g - 1)
        return Estimate(mean, mean - q * se, mean + q * se, se, None, self.level, g, CR1)


def group_means(values: np.ndarray, group: np.ndarray, session: np.ndarray, n_groups: int,
                level: float = 0.95) -> GroupMeans:
    """Each of ``n_groups`` groups' mean of ``values`` (finite) clustered by ``session``
    (non-negative integers)."""
    cells, cell_of, counts = unique_rows(group, session)  # the (group, session) cells
    cell_group, counts = cells[0], counts.astype(float)
    totals = np.bincount(cell_of, weights=values, minlength=len(counts))
    records = np.bincount(group, minlength=n_groups)
    sessions = np.bincount(cell_group, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(cell_group, weights=totals, minlength=n_groups) / records
        influence = totals - counts * mean[cell_group]
        squares = np.bincount(cell_group, weights=influence * influence, minlength=n_groups)
        se = np.sqrt(sessions / (sessions - 1) * squares) / records
        se[sessions < 2] = math.nan
        spread = np.bincount(group, weights=(values - mean[group]) ** 2, minlength=n_groups)
        sd = np.sqrt(spread / (records - 1))
    sd[records < 2] = math.nan
    return GroupMeans(records, sessions, mean, se, sd, level)
