"""Posterior of every effect given the variance components (parametric empirical Bayes,
Morris 1983): with a flat prior on the fixed columns and the populations' fitted spreads as
the prior of the random effects, the effects' posterior is normal with the mixed-model
equations' solution as its mean (Henderson's BLUP) and sigma^2 times their inverse as its
covariance. A reported figure is a linear contrast of the effects."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from council_db.analysis.hierarchical.reml import Components, column_scales, factor, selected
from council_db.analysis.hierarchical.terms import Terms
from council_db.analysis.stats.distributions import normal_cdf

Z95 = 1.959963984540054  # the normal's 97.5% quantile


@dataclass(frozen=True)
class PosteriorEffect:
    """One effect's posterior: mean, SD, 95% credible interval, and P(effect > 0 | data)."""

    mean: float
    sd: float
    ci_low: float
    ci_high: float
    p_positive: float

    @property
    def p_negative(self) -> float:
        return 1.0 - self.p_positive

    @property
    def p_sign(self) -> float:
        """The posterior probability of the sign its mean has: how sure the data are of its direction."""
        return max(self.p_positive, self.p_negative)


@dataclass
class Posterior:
    """Posterior mean and covariance of the effects [random (points); fixed], fixed columns the
    fit dropped as 0 with no variance."""

    mean: np.ndarray
    covariance: np.ndarray

    def effect(self, contrast: np.ndarray) -> PosteriorEffect:
        mean = float(contrast @ self.mean)
        variance = float(contrast @ self.covariance @ contrast)
        sd = math.sqrt(max(variance, 0.0))
        if sd == 0.0:  # fully pooled: the data move nothing, so neither sign is more likely
            return PosteriorEffect(mean, 0.0, mean, mean, 0.5 if mean == 0 else float(mean > 0))
        return PosteriorEffect(mean, sd, mean - Z95 * sd, mean + Z95 * sd, float(normal_cdf(mean / sd)))


def posterior(cross: np.ndarray, terms: Terms, components: Components) -> Posterior:
    """The effects' posterior at these components (all of a window's statistics in ``cross``)."""
    reduced = selected(cross, terms, components.fixed)
    scales = column_scales(terms, components.relative)
    lower = factor(reduced, scales)
    n = reduced.shape[0] - 1
    size = terms.q + terms.p
    if lower is None or not math.isfinite(components.sigma):
        return Posterior(np.full(size, math.nan), np.full((size, size), math.nan))
    top = lower[:n, :n]
    whitened = lower[n, :n]  # L_top^T solution = whitened: the mixed-model equations' solution
    solution = np.linalg.solve(top.T, whitened)
    inverse_factor = np.linalg.solve(top, np.eye(n))
    precision_inverse = inverse_factor.T @ inverse_factor
    d = np.concatenate([scales, np.ones(n - terms.q)])
    columns = np.concatenate([np.arange(terms.q), terms.q + np.asarray(components.fixed, dtype=np.int64)])
    mean, covariance = np.zeros(size), np.zeros((size, size))
    mean[columns] = d * solution
    covariance[np.ix_(columns, columns)] = components.sigma ** 2 * precision_inverse * np.outer(d, d)
    return Posterior(mean, covariance)
