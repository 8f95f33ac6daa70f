"""The variance components by restricted maximum likelihood (REML), from the cross products
alone: the profiled REML criterion of Bates et al. (2015, sec. 3) on the within-session
design, minimised over each population's relative spread (its SD over the residual SD) by
Nelder-Mead. Sessions' own effects are absorbed by the demeaning, so the residual degrees of
freedom are records minus units minus fixed columns, as in a model with a fixed effect per
session (REML's error contrasts of that model are exactly the demeaned design's)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from council_db.analysis.hierarchical.cross_products import Strata, weighted
from council_db.analysis.hierarchical.terms import COMPONENTS, Terms
from council_db.analysis.stats.nelder_mead import minimise

ANSWER = "answer"  # the answers' own qualities: a component outside Z, integrated out (cross_products)
START = 0.5  # relative spread the search starts from: effects half the residual SD
# -2 log of a gamma(2, rate -> 0) prior on each relative spread (Chung et al. 2013, blme's
# default for a variance's SD): the estimate is then never exactly 0, so no effect's posterior
# collapses to a point that the data cannot have shown (a spread of 0 claims every member is
# the population's mean for sure)
BOUNDARY_AVOIDING = 2.0
_PIVOT = 1e-10  # a fixed column whose residual norm is this small relative to its own is dependent
_INFORMED = 1e-9  # a random column whose within-session sum of squares is this small is all zero
MIN_MEMBERS = 3  # fewer members cannot estimate a spread (Gelman 2006): their effects get a flat prior
FLAT = 1e4  # the relative spread of a flat prior: 10,000 residual SDs, the joint model's fixed effects
MAX_RELATIVE = 10.0  # spreads searched below this: ten residual SDs, beyond any score scale's reach
UNBOUNDED = 0.99  # a search that ends this close to MAX_RELATIVE found no bound: a flat prior instead


@dataclass
class Components:
    """A fit's variance components and the columns it kept."""

    relative: dict[str, float]  # component -> its SD over the residual SD (0: fully pooled); ANSWER's too
    sigma: float  # residual SD (points)
    fixed: list[int]  # the independent fixed columns, indices into Terms.fixed_names
    active: list[str]  # components whose spread REML estimated
    flat: list[str] = field(default_factory=list)  # informed components given a flat prior (too few members)
    members: dict[str, int] = field(default_factory=dict)  # component -> members the data inform
    df: float = math.inf  # degrees of freedom of the posterior's t tails (``residual_df``)

    @property
    def rho(self) -> float:
        """The answer effect's variance over the residual variance (0: none fitted)."""
        return self.relative.get(ANSWER, 0.0) ** 2

    def spread(self, name: str) -> float:
        """The population SD of a component, in points (per SD of log length for length); NaN
        where it was not estimated (a flat prior)."""
        return math.nan if name in self.flat else self.relative.get(name, 0.0) * self.sigma


def column_scales(terms: Terms, relative: dict[str, float]) -> np.ndarray:
    """Each Z column's relative SD (Bates et al.'s diagonal Lambda)."""
    scales = np.zeros(terms.q)
    for name, block in terms.blocks().items():
        scales[block] = relative.get(name, 0.0)
    return scales


def selected(cross: np.ndarray, terms: Terms, fixed: list[int]) -> np.ndarray:
    """The cross products of Z, the kept fixed columns and y."""
    keep = np.concatenate([np.arange(terms.q), terms.q + np.asarray(fixed, dtype=np.int64), [cross.shape[0] - 1]])
    return cross[np.ix_(keep, keep)]


def factor(cross: np.ndarray, scales: np.ndarray) -> np.ndarray | None:
    """Cholesky factor of the penalised system [[L Z'Z L + I, L Z'X, L Z'y], [.., X'X, X'y],
    [.., .., y'y]] (``cross`` already ``selected``); None when it is not positive definite."""
    d = np.concatenate([scales, np.ones(cross.shape[0] - len(scales))])
    system = cross * np.outer(d, d)
    system[np.arange(len(scales)), np.arange(len(scales))] += 1.0
    try:
        return np.linalg.cholesky(system)
    except np.linalg.LinAlgError:
        return None


def criterion(cross: np.ndarray, scales: np.ndarray, q: int, n_eff: int) -> float:
    """The profiled REML deviance -2 log L_R at these relative spreads (Bates et al. 2015, eq. 42)."""
    lower = factor(cross, scales)
    if lower is None:
        return math.inf
    diagonal = np.diag(lower)
    p = len(diagonal) - q - 1
    rss = diagonal[-1] ** 2
    df = n_eff - p
    if rss <= 0 or df < 1:
        return math.inf
    return float(2 * np.log(diagonal[:-1]).sum() + df * (1 + math.log(2 * math.pi * rss / df)))


def residual_sigma(cross: np.ndarray, scales: np.ndarray, q: int, n_eff: int) -> float:
    """The residual SD that maximises the REML likelihood at these spreads."""
    lower = factor(cross, scales)
    p = cross.shape[0] - q - 1
    return math.sqrt(lower[-1, -1] ** 2 / (n_eff - p)) if lower is not None and n_eff > p else math.nan


def independent_fixed(cross: np.ndarray, terms: Terms) -> list[int]:
    """The fixed columns not explained by those before them (sequential Cholesky on X'X)."""
    kept: list[int] = []
    for j in range(terms.p):
        trial = kept + [j]
        gram = cross[np.ix_(terms.q + np.asarray(trial), terms.q + np.asarray(trial))]
        own = gram[-1, -1]
        if own <= 0:
            continue
        try:
            lower = np.linalg.cholesky(gram)
        except np.linalg.LinAlgError:
            continue
        if lower[-1, -1] ** 2 > _PIVOT * own:
            kept.append(j)
    return kept


def members(terms: Terms, diagonal: np.ndarray) -> dict[str, int]:
    """Per component: how many members (reviewers, candidates) the data inform, i.e. have a
    column that varies within some session."""
    out = {}
    for name, block in terms.blocks().items():
        informed = diagonal[block] > _INFORMED
        per_member = len(terms.slots) if name == "slot" and len(terms.slots) > 1 else 1
        out[name] = int(informed.reshape(-1, per_member).any(axis=1).sum()) if len(informed) else 0
    return out


@dataclass
class AnswerLayout:
    """How many answers of each size (scores) each unit has, as the few distinct patterns the
    units share: what the answer effect adds to the REML criterion costs O(patterns), not
    O(answers), per evaluation."""

    sizes: np.ndarray  # the distinct answer sizes m
    count: np.ndarray  # answers of each size
    patterns: np.ndarray  # (patterns, sizes): a unit's answers of each size
    weight: np.ndarray  # units with each pattern

    @classmethod
    def of(cls, sizes: np.ndarray, unit: np.ndarray) -> AnswerLayout:
        distinct, which = np.unique(sizes, return_inverse=True)
        per_unit = np.zeros((int(unit.max()) + 1 if len(unit) else 0, len(distinct)))
        np.add.at(per_unit, (unit, which), 1.0)
        patterns, weight = np.unique(per_unit[per_unit.any(axis=1)], axis=0, return_counts=True)
        return cls(distinct.astype(float), np.bincount(which).astype(float), patterns, weight.astype(float))

    def log_det(self, rho: float) -> float:
        """What integrating the answer effects out adds to -2 log L_R: log |V_a| + log |S'V_a^-1 S|
        - log |S'S|, V_a = I + rho x (answer incidence) their covariance over sigma^2 and S the
        units' indicators (their effects are fixed, so REML counts their information)."""
        if rho == 0.0 or not len(self.sizes):
            return 0.0
        weight = 1.0 + rho * self.sizes
        per_unit = (self.patterns @ (self.sizes / weight)) / (self.patterns @ self.sizes)
        return float(self.count @ np.log(weight) + self.weight @ np.log(per_unit))


def fit_components(strata: Strata, terms: Terms, n_eff: int) -> Components:
    """REML estimates of the spread of every component with at least MIN_MEMBERS informed
    members; a component with fewer,
    or whose spread the data cannot bound, gets a flat prior (FLAT: the joint model's fixed
    effects); one the data do not inform at all is left out (``active`` and ``flat`` lack it).
    The answer effect's spread is estimated where at least MIN_MEMBERS answers have two or
    more scores (within an answer only the error varies, so the two can be told apart)."""
    cross = strata.total
    fixed = independent_fixed(cross, terms)
    reduced = selected(cross, terms, fixed)
    between = {m: selected(part, terms, fixed) for m, part in strata.between.items()}
    sizes, unit = terms.answer_sizes()
    counts = members(terms, np.diag(cross))
    counts[ANSWER] = int((sizes >= 2).sum())
    informed = [name for name in COMPONENTS if counts[name] > 0]
    active = [name for name in informed if counts[name] >= MIN_MEMBERS]
    answers = counts[ANSWER] >= MIN_MEMBERS
    layout = AnswerLayout.of(sizes, unit)
    q = terms.q
    owner = np.full(q, len(active))  # each Z column's component among ``active`` (the last: a fixed value)
    for number, name in enumerate(active):
        owner[terms.blocks()[name]] = number
    others = column_scales(terms, {name: FLAT for name in informed if name not in active})

    def deviance(x: np.ndarray) -> float:
        spreads = np.abs(x)
        if not np.all((spreads > 0) & (spreads < MAX_RELATIVE)):
            return math.inf
        scales = np.where(owner < len(active), np.append(spreads[:len(active)], 0.0)[owner], others)
        rho = float(spreads[-1]) ** 2 if answers else 0.0
        return criterion(weighted(reduced, between, rho), scales, q, n_eff) \
            + layout.log_det(rho) - BOUNDARY_AVOIDING * float(np.log(spreads).sum())

    first = np.full(len(active) + answers, START)
    best, _ = minimise(deviance, first) if len(first) else (np.zeros(0), 0.0)
    relative = {name: float(abs(value)) for name, value in zip(active, best)}
    unbounded = [name for name, value in relative.items() if value > UNBOUNDED * MAX_RELATIVE]
    flat = [name for name in informed if name not in active or name in unbounded]
    relative.update({name: FLAT for name in flat})
    relative.update({name: 0.0 for name in COMPONENTS if name not in informed})
    relative[ANSWER] = float(abs(best[-1])) if answers else 0.0
    rho = relative[ANSWER] ** 2
    sigma = residual_sigma(weighted(reduced, between, rho), column_scales(terms, relative), q, n_eff)
    return Components(relative, sigma, fixed, [name for name in active if name not in flat] + [ANSWER] * answers,
                      flat, counts, residual_df(n_eff, len(fixed), len(sizes), terms.units(), answers))


def residual_df(n_eff: int, p: int, answers: int, units: int, answer_effect: bool) -> float:
    """The residual degrees of freedom of the stratum the panel's effects rest on: with an
    answer effect, the answers' (answers less units less fixed columns: slots shown to every
    reviewer at once, length and quality are between-answer comparisons); else the records'.
    One df for every figure: for a figure within answers (severity, self-preference) the
    tails are then a little heavier than they need be, never lighter."""
    df = answers - units - p if answer_effect else n_eff - p
    return float(max(df, 1))

