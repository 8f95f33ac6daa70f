"""group_means: every group's mean figure in one pass is each group's own ``mean_figure``
(mean, CR1 SE, t interval on sessions - 1 df, no p-value) and its SD, to rounding, on groups
of one record, of one session and of many."""

from __future__ import annotations

import math

import numpy as np

from council_db.analysis.stats import mean_figure
from council_db.analysis.stats.group_means import group_means


def test_each_groups_figure_is_its_own_mean_figure_and_sd():
    rng = np.random.default_rng(4)
    n, groups = 5_000, 700
    group = rng.integers(0, groups, n)  # ~7 records a group: some with one record or one session
    session = rng.integers(0, 3_000, n)
    session[group == 3] = 17  # a group of one session
    values = rng.integers(1, 11, n).astype(float)
    found = group_means(values, group, session, groups + 2)  # and two groups without records
    kinds = set()
    for g in range(groups):
        mine = group == g
        expected, got = mean_figure(values[mine], session[mine]), found.figure(g)
        kinds.add(min(int(found.sessions[g]), 2))
        assert got.p_value is None and got.n_sessions == expected.n_sessions == len(np.unique(session[mine]))
        for field in ("estimate", "ci_low", "ci_high", "se"):
            a, b = getattr(got, field), getattr(expected, field)
            assert (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12, (g, field, a, b)
        sd = float(np.std(values[mine], ddof=1)) if mine.sum() > 1 else math.nan
        assert (math.isnan(sd) and math.isnan(found.sd[g])) or abs(found.sd[g] - sd) <= 1e-12
    assert {1, 2} <= kinds
    assert found.records[groups:].tolist() == [0, 0] and math.isnan(found.figure(groups).estimate)
