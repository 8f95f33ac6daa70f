"""How far a judge's verdicts agree with the reference, and the reference raters among themselves.

Three comparisons, each over answer pairs and each a 3x3 table per item (stats/verdict_tables):

* ``with_reference``: the judge against the reference verdict (the raters' strict majority),
  one table entry per pair: the headline.
* ``with_raters``: the judge against each single rater, where two or more rated the pair, the
  pair's raters weighing 1 in all: comparable with the ceiling, since a majority is less noisy
  than one rater and a judge compared with it would look better than any rater does.
* ``among_raters``: every two raters of a pair (the human ceiling; Zheng et al. 2023 count
  human-human agreement the same way), the pair's rater pairs weighing 1 in all, both orders
  of each, so kappa is Scott's pi over the pooled margin.

Each gives raw agreement and Cohen's kappa over three classes (MT-bench's S1, with ties) and
over the pairs where neither side said tie (S2, without ties), and Kendall's tau-b (the
within-session rank agreement of pointwise scores), with 95% CIs cluster-robust by item (the
delta method on the per-item tables, t with G-1 df: stats/linearized.py). ``below_ceiling``
tests, per judge, whether its agreement with single raters falls short of theirs with each
other on the same pairs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from msgspec.structs import replace

from council_db.analysis.reference.verdicts import Majority, Pairs
from council_db.analysis.stats.clustered import clustered_mean
from council_db.analysis.stats.distributions import t_cdf
from council_db.analysis.stats.estimate import Estimate
from council_db.analysis.stats.linearized import effective_wilson, linearized_estimate
from council_db.analysis.stats.verdict_tables import (
    CLASSES,
    agreement,
    chance_agreement,
    cluster_tables,
    cohen_kappa,
    kendall_tau_b,
    verdict_class,
    without_ties,
)

SHARE, COEFFICIENT = (0.0, 1.0), (-1.0, 1.0)
STATISTICS = {
    "agreement": (agreement, SHARE, "raw agreement, three classes (MT-bench S1, ties kept)"),
    "kappa": (cohen_kappa, COEFFICIENT, "Cohen's kappa, three classes (S1)"),
    "agreement_without_ties": (lambda t: agreement(without_ties(t)), SHARE,
                               "raw agreement where neither said tie (MT-bench S2)"),
    "kappa_without_ties": (lambda t: cohen_kappa(without_ties(t)), COEFFICIENT,
                           "Cohen's kappa where neither said tie (S2)"),
    "tau_b": (kendall_tau_b, COEFFICIENT, "Kendall's tau-b over answer pairs"),
}
CI = "CR1 delta-method CI by item, t with G-1 df"


@dataclass(frozen=True)
class VerdictAgreement:
    agreement: Estimate  # S1
    kappa: Estimate  # S1
    agreement_without_ties: Estimate  # S2
    kappa_without_ties: Estimate  # S2
    tau_b: Estimate
    pairs: float  # answer pairs compared (each weighing 1)
    sessions: int
    items: int


def compare(tables: np.ndarray, pair_sessions: np.ndarray, level: float = 0.95, comparisons: float = 1.0) \
        -> VerdictAgreement:
    """Every coefficient of per-item tables (rows: items, 9 cells) with its CI, over the items
    that hold a table entry; ``pair_sessions``: the sessions of the pairs compared. Agreement
    takes Wilson's interval on its effective sample size (stats/linearized.py), as shares near 1
    need, at most the single comparisons it averages (``comparisons`` per pair: one against
    the majority, one per rater against single raters); a kappa without disagreement (1, SE 0)
    takes that interval through its chance agreement."""
    held = tables[tables.sum(axis=1) > 0]
    sessions = len(np.unique(pair_sessions))
    found = {name: replace(linearized_estimate(held, statistic, level, f"{label}, {CI}", bounds), n_sessions=sessions)
             for name, (statistic, bounds, label) in STATISTICS.items()}
    total = held.sum(axis=0)[None, :]
    for share, kappa, table in (("agreement", "kappa", total),
                                ("agreement_without_ties", "kappa_without_ties", without_ties(total))):
        found[share] = effective_wilson(found[share], comparisons * float(table.sum()))
        found[kappa] = _kappa_without_variation(found[kappa], found[share], float(chance_agreement(table)[0]))
    return VerdictAgreement(**found, pairs=float(held.sum()), sessions=sessions, items=len(held))


def _kappa_without_variation(kappa: Estimate, share: Estimate, chance: float) -> Estimate:
    """Where kappa's delta method has nothing to go on (no item differs: SE 0), its interval is
    the agreement's mapped through (a - p_e) / (1 - p_e), chance agreement held fixed."""
    if not kappa.computable or (kappa.se and kappa.se > 0) or not share.has_interval or chance >= 1.0:
        return kappa
    return replace(kappa, ci_low=(share.ci_low - chance) / (1.0 - chance),
                   ci_high=(share.ci_high - chance) / (1.0 - chance),
                   method=f"{kappa.method}; no variation: the agreement's interval, chance agreement held fixed")


def with_reference(found: Pairs, judge: int, reference: Majority, item: np.ndarray, n_items: int,
                   level: float = 0.95) -> VerdictAgreement:
    """The judge's verdicts against the reference verdict, over the pairs both gave one."""
    judged = found.verdicts[:, judge]
    both = np.isfinite(judged) & np.isfinite(reference.verdict)
    items = item[found.session[both]]
    tables = cluster_tables(items, verdict_class(judged[both]), verdict_class(reference.verdict[both]),
                            np.ones(both.sum()), n_items)
    return compare(tables, found.session[both], level)


def _rated_twice(reference: Majority) -> np.ndarray:
    return reference.counts.sum(axis=1) >= 2


def with_raters(found: Pairs, judge: int, reference: Majority, item: np.ndarray, n_items: int,
                level: float = 0.95) -> VerdictAgreement:
    """The judge against each single rater, over the pairs it judged that two or more rated."""
    judged = found.verdicts[:, judge]
    use = np.isfinite(judged) & _rated_twice(reference)
    counts = reference.counts[use]
    share = counts / counts.sum(axis=1, keepdims=True)
    items, judge_class = item[found.session[use]], verdict_class(judged[use])
    tables = sum(cluster_tables(items, judge_class, np.full(use.sum(), b), share[:, b], n_items)
                 for b in range(CLASSES))
    return compare(tables, found.session[use], level, float(counts.sum(axis=1).mean()) if use.any() else 1.0)


def among_raters(found: Pairs, reference: Majority, item: np.ndarray, n_items: int,
                 level: float = 0.95) -> VerdictAgreement:
    """The reference raters' agreement with each other (the human ceiling), over the pairs two
    or more of them rated."""
    use = _rated_twice(reference)
    counts = reference.counts[use].astype(np.float64)
    ordered_pairs = counts.sum(axis=1) * (counts.sum(axis=1) - 1)
    items = item[found.session[use]]
    tables = np.zeros((n_items, CLASSES * CLASSES))
    for a in range(CLASSES):
        for b in range(CLASSES):
            weight = counts[:, a] * (counts[:, b] - (a == b)) / ordered_pairs
            tables += cluster_tables(items, np.full(len(items), a), np.full(len(items), b), weight, n_items)
    return compare(tables, found.session[use], level, float(ordered_pairs.mean() / 2) if use.any() else 1.0)


def below_ceiling(found: Pairs, judge: int, reference: Majority, item: np.ndarray, level: float = 0.95) -> Estimate:
    """The judge's agreement with single raters minus the raters' agreement with each other, over
    the pairs the judge judged that two or more raters rated, per pair and then averaged; CI
    cluster-robust by item (t, G-1 df). ``p_value`` is one-sided, of "not below the ceiling":
    small when the judge agrees with people less than they agree with each other."""
    judged = found.verdicts[:, judge]
    use = np.isfinite(judged) & _rated_twice(reference)
    counts = reference.counts[use].astype(np.float64)
    rated = counts.sum(axis=1)
    with_judge = counts[np.arange(len(counts)), verdict_class(judged[use])] / rated
    among = (counts * (counts - 1)).sum(axis=1) / (rated * (rated - 1))
    found_mean = clustered_mean(with_judge - among, item[found.session[use]], level)
    method = "agreement with single raters minus theirs with each other, CR1 by item, one-sided t (below)"
    g = found_mean.n_sessions or 0
    p = math.nan
    if g >= 2 and found_mean.se and found_mean.se > 0:
        p = float(t_cdf(found_mean.estimate / found_mean.se, g - 1))
    elif g >= 2 and math.isfinite(found_mean.estimate):
        p = 0.0 if found_mean.estimate < 0 else 1.0
    return replace(found_mean, p_value=p, n_sessions=len(np.unique(found.session[use])), method=method)
