"""The posterior as sessions arrived: each reviewer's severity after each of at most 50 cut
points (every session in a window of 50 or fewer), under the population spreads the whole
window estimates (one prior, updated by the data as they came: Bayes' rule, so nothing but
the data moves the figures), and the session since which each reviewer's severity has stayed
within half a prior SD of where it ends: the seed's "profiles stable: < 0.5 SD drift"."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from council_db.analysis.hierarchical.posterior import posterior
from council_db.analysis.hierarchical.reml import Components, independent_fixed, residual_df
from council_db.analysis.hierarchical.terms import Terms
from council_db.analysis.stats.distributions import t_ppf

MAX_CUTS = 50
STABLE_WITHIN = 0.5  # prior SDs: the seed's stability threshold


@dataclass
class Path:
    """One reviewer's severity (vs the panel average) after each cut: posterior means and 95% CIs."""

    sessions: list[int]  # the cut points: sessions seen
    means: list[float]
    ci_low: list[float]
    ci_high: list[float]
    stable_since: int | None  # sessions after which the mean stayed within 0.5 prior SD of its last


def cut_points(n_sessions: int, most: int = MAX_CUTS) -> list[int]:
    """Session counts from 2 (the first with a comparison across sessions) to all, evenly spaced."""
    if n_sessions < 2:
        return []
    return sorted(set(np.rint(np.linspace(2, n_sessions, min(most, n_sessions - 1))).astype(int).tolist()))


def severity_paths(terms: Terms, reviewers: list[str], components: Components, cuts: list[int],
                   crosses: list[np.ndarray]) -> dict[str, Path]:
    """Each reviewer's severity path over the ``cuts`` (``crosses``: the cross products at each)."""
    block = terms.blocks()["reviewer"]
    if block.stop == block.start:
        return {}
    present = np.unique(terms.reviewer).tolist()
    rows = np.zeros((len(present), terms.q + terms.p))
    for number, r in enumerate(present):
        rows[number, block.start + np.asarray(present)] = -1.0 / len(present)
        rows[number, block.start + r] += 1.0
    means = np.full((len(cuts), len(present)), math.nan)
    sds = np.full_like(means, math.nan)
    dfs = np.full(len(cuts), math.inf)  # of each cut's t tails
    for i, (cut, cross) in enumerate(zip(cuts, crosses)):
        records = int(np.searchsorted(terms.session, cut, side="left"))
        if records == 0 or terms.degrees(records) < 1:
            continue
        fixed = independent_fixed(cross, terms)
        answers = int(terms.answer[:records].max()) + 1 if terms.answer[0] >= 0 else 0  # numbered by unit: whole ones
        at_cut = replace(components, fixed=fixed, df=residual_df(terms.degrees(records), len(fixed), answers,
                                                                 terms.units(records), components.rho > 0))
        post = posterior(cross, terms, at_cut)
        means[i] = rows @ post.mean
        dfs[i] = post.df
        sds[i] = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", rows, post.covariance, rows), 0.0))
    halves = sds * t_ppf(0.975, dfs)[:, None]  # 95% credible intervals' half widths, in one call
    prior_sd = components.spread("reviewer")
    return {reviewers[r]: Path(cuts, means[:, n].tolist(), (means[:, n] - halves[:, n]).tolist(),
                               (means[:, n] + halves[:, n]).tolist(), stable_since(cuts, means[:, n], prior_sd))
            for n, r in enumerate(present)}


def stable_since(cuts: list[int], means: np.ndarray, unit: float) -> int | None:
    """The first cut after which every later mean is within STABLE_WITHIN units of the last
    one; None when the unit is 0 (a fully pooled population: no reviewer differs) or unknown."""
    if not unit > 0 or not len(cuts):
        return None
    off = ~(np.abs(means - means[-1]) <= STABLE_WITHIN * unit)  # NaN (no data yet) counts as off
    if not off.any():
        return cuts[0]
    return cuts[int(np.flatnonzero(off)[-1]) + 1]
