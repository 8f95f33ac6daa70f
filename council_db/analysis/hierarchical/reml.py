"""The variance components by restricted maximum likelihood (REML), from the cross products
alone: the profiled REML criterion of Bates et al. (2015, sec. 3) on the within-session
design, minimised over each population's relative spread (its SD over the residual SD) by
Nelder-Mead. Sessions' own effects are absorbed by the demeaning, so the residual degrees of
freedom are records minus units minus fixed columns, as in a model with a fixed effect per
session (REML's error contrasts of that model are exactly the demeaned design's)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from council_db.analysis.hierarchical.terms import COMPONENTS, Terms
from council_db.analysis.stats.nelder_mead import minimise

START = 0.5  # relative spread the search starts from: effects half the residual SD
# -2 log of a gamma(2, rate -> 0) prior on each relative spread (Chung et al. 2013, blme's
# default for a variance's SD): the estimate is then never exactly 0, so no effect's posterior
# collapses to a point that the data cannot have shown (a spread of 0 claims every member is
# the population's mean for sure)
BOUNDARY_AVOIDING = 2.0
_PIVOT = 1e-10  # a fixed column whose residual norm is this small relative to its own is dependent


@dataclass
class Components:
    """A fit's variance components and the columns it kept."""

    relative: dict[str, float]  # component -> its SD over the residual SD (0: fully pooled)
    sigma: float  # residual SD (points)
    fixed: list[int]  # the independent fixed columns, indices into Terms.fixed_names
    active: list[str]  # components with any column the data inform
    df: int  # residual degrees of freedom: records - units - fixed columns

    def spread(self, name: str) -> float:
        """The population SD of a component, in points (per SD of log length for length)."""
        return self.relative.get(name, 0.0) * self.sigma


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


def fit_components(cross: np.ndarray, terms: Terms, n_eff: int,
                   start: dict[str, float] | None = None) -> Components:
    """REML estimates of every component the data inform (``start``: a previous fit's, to
    begin the search from)."""
    fixed = independent_fixed(cross, terms)
    reduced = selected(cross, terms, fixed)
    diagonal = np.diag(cross)
    active = [name for name, block in terms.blocks().items()
              if block.stop > block.start and np.any(diagonal[block] > 0)]
    q = terms.q
    owner = np.full(q, len(active))  # each Z column's component among ``active`` (the last: none)
    for number, name in enumerate(active):
        owner[terms.blocks()[name]] = number

    def deviance(x: np.ndarray) -> float:
        spreads = np.abs(x)
        if not np.all(spreads > 0):
            return math.inf
        return criterion(reduced, np.append(spreads, 0.0)[owner], q, n_eff) \
            - BOUNDARY_AVOIDING * float(np.log(spreads).sum())

    first = np.array([(start or {}).get(name, START) or START for name in active])
    best, _ = minimise(deviance, first) if active else (np.zeros(0), 0.0)
    relative = {name: float(abs(value)) for name, value in zip(active, best)}
    relative.update({name: 0.0 for name in COMPONENTS if name not in relative})
    sigma = residual_sigma(reduced, column_scales(terms, relative), q, n_eff)
    return Components(relative, sigma, fixed, active, n_eff - len(fixed))
