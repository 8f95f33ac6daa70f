"""Posterior of every effect given the variance components (parametric empirical Bayes,
Morris 1983): with a flat prior on the fixed columns and the populations' fitted spreads as
the prior of the random effects, the effects' posterior is centred on the mixed-model
equations' solution (Henderson's BLUP) with sigma^2 times their inverse as its scale. A
reported figure is a linear contrast of the effects.

Its tails are Student's t on ``Components.df`` degrees of freedom, not normal: sigma^2 (and
the answer effect's variance) are estimated, and with a flat prior on log sigma the
posterior of a regression's effects is t on the residual degrees of freedom (Box & Tiao
1973, sec. 2.7; Gelman et al. 2013, sec. 14.2); a plug-in normal posterior ignores that
and, on 10-30 sessions, claims too much in the tails where the flags are decided."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from council_db.analysis.hierarchical.reml import Components, column_scales, factor, selected
from council_db.analysis.hierarchical.terms import Terms
from council_db.analysis.stats.distributions import chi2_sf, f_sf, t_cdf
from council_db.analysis.stats.inference import t_quantile


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
    fit dropped as 0 with no variance, and the degrees of freedom of its t tails."""

    mean: np.ndarray
    covariance: np.ndarray
    df: float

    @property
    def half_width(self) -> float:
        """A 95% credible interval's half width, in posterior SDs."""
        return t_quantile(0.95, self.df)

    def effect(self, contrast: np.ndarray) -> PosteriorEffect:
        mean = float(contrast @ self.mean)
        variance = float(contrast @ self.covariance @ contrast)
        sd = math.sqrt(max(variance, 0.0))
        if sd == 0.0:  # fully pooled: the data move nothing, so neither sign is more likely
            return PosteriorEffect(mean, 0.0, mean, mean, 0.5 if mean == 0 else float(mean > 0))
        half = self.half_width * sd
        return PosteriorEffect(mean, sd, mean - half, mean + half, float(t_cdf(mean / sd, self.df)))

    def origin_tail(self, contrasts: np.ndarray) -> float:
        """The posterior probability outside the highest-density region whose edge passes
        through "all these contrasts are 0": under the multivariate t posterior, the F(q, df)
        tail of the origin's Mahalanobis distance / q (Box & Tiao 1973, sec. 2.8). One
        contrast: the two-sided t tail, 2 x (1 - P(sign)). NaN where none has variance."""
        mean = contrasts @ self.mean
        values, vectors = np.linalg.eigh(contrasts @ self.covariance @ contrasts.T)
        kept = values > 1e-12 * max(float(values.max(initial=0.0)), 1e-300)
        q = int(kept.sum())
        if q == 0:
            return math.nan
        projected = vectors[:, kept].T @ mean
        distance = float(np.sum(projected ** 2 / values[kept]))
        return float(f_sf(distance / q, q, self.df)) if math.isfinite(self.df) \
            else float(chi2_sf(distance, q))


def posterior(cross: np.ndarray, terms: Terms, components: Components) -> Posterior:
    """The effects' posterior at these components (all of a window's statistics in ``cross``)."""
    reduced = selected(cross, terms, components.fixed)
    scales = column_scales(terms, components.relative)
    lower = factor(reduced, scales)
    n = reduced.shape[0] - 1
    size = terms.q + terms.p
    if lower is None or not math.isfinite(components.sigma):
        return Posterior(np.full(size, math.nan), np.full((size, size), math.nan), math.nan)
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
    return Posterior(mean, covariance, components.df)
