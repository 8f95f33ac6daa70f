"""Classic meta-analysis of per-session correlations: fixed effect and DerSimonian-Laird
random effects on Fisher z, with Cochran's Q, I^2 and tau^2.

Reported because users of meta-analysis expect these numbers, not as the headline: each
session is a "study" of 4-5 answers, far below the sizes these methods assume. Per-session
Fisher z is biased away from zero at such n and 1/(n-3) misstates its variance, so both
pooled estimates are biased and their intervals far too narrow once there are hundreds of
sessions (benchmarks/bench_correlation.py). The within-session correlation is the headline.
"""

from __future__ import annotations

import math
from typing import Callable

import msgspec
import numpy as np
from numpy.typing import ArrayLike

from council_db.analysis.stats.estimate import Estimate
from council_db.analysis.stats.inference import chi2_sf, normal_p_value, normal_quantile

FIXED = "fixed effect (inverse variance) on Fisher z, variance 1/(n-3), normal CI"
RANDOM = "random effects (DerSimonian-Laird) on Fisher z, normal CI"


class MetaAnalysis(msgspec.Struct, frozen=True):
    """Pooled per-session correlations. ``fixed`` and ``random`` are on the r scale
    (back-transformed from Fisher z; their ``se`` is None); ``z_*``/``se_*`` are on the z
    scale. ``k`` sessions were used; ``dropped`` were left out, for the reasons counted in
    ``dropped_reasons``: "too_few_answers" (n < 4: the variance 1/(n-3) is undefined),
    "perfect_correlation" (|r| = 1: z is infinite), "no_correlation" (r is NaN: no variation).
    I^2 is 0 when Q <= df (also when k = 1); everything is NaN when k = 0."""

    fixed: Estimate
    random: Estimate
    q: float
    df: int
    q_p_value: float
    i2: float
    tau2: float
    k: int
    dropped: int
    z_fixed: float
    se_fixed: float
    z_random: float
    se_random: float
    dropped_reasons: dict[str, int] = msgspec.field(default_factory=dict)


def _pooled(z: float, se: float, crit: float, level: float, k: int, method: str) -> Estimate:
    return Estimate(math.tanh(z), math.tanh(z - crit * se), math.tanh(z + crit * se), None,
                    normal_p_value(z / se), level, k, method)


class FisherZSums(msgspec.Struct, frozen=True):
    """What fixed-effect pooling and Cochran's Q need from the k usable sessions: sums of
    w = n - 3, w^2, w z and w z^2 (z = atanh r). A database can add these up per session."""

    k: int
    sw: float
    sw2: float
    swz: float
    swz2: float
    dropped_reasons: dict[str, int] = msgspec.field(default_factory=dict)


# Given tau^2, (sum w*, sum w* z) with random-effects weights w* = 1 / (1/w + tau^2): a
# second pass over the sessions, once tau^2 is known.
RandomSums = Callable[[float], tuple[float, float]]


def meta_analysis(r_s: ArrayLike, n_s: ArrayLike, level: float = 0.95) -> MetaAnalysis:
    """Fixed and DerSimonian-Laird random effects pooling of per-session r with n_s points.

    z_i = atanh(r_i), v_i = 1/(n_i-3), w_i = 1/v_i; fixed z = sum w z / sum w, SE
    1/sqrt(sum w); Q = sum w (z - fixed z)^2 on k-1 df; tau^2 = max(0, (Q - (k-1)) /
    (sum w - sum w^2 / sum w)); random weights 1/(v_i + tau^2); I^2 = max(0, (Q-df)/Q).
    p-values test rho = 0 (normal), q_p_value tests homogeneity (chi-square).
    """
    r = np.asarray(r_s, dtype=np.float64).ravel()
    n = np.asarray(n_s, dtype=np.float64).ravel()
    nan_r = np.isnan(r)
    few = ~nan_r & (n < 4)
    perfect = ~nan_r & ~few & (np.abs(r) >= 1.0)
    used = ~(nan_r | few | perfect)
    reasons = {"too_few_answers": int(few.sum()), "perfect_correlation": int(perfect.sum()),
               "no_correlation": int(nan_r.sum())}
    z, w = np.arctanh(r[used]), n[used] - 3.0
    sums = FisherZSums(len(z), float(w.sum()), float(w @ w), float(w @ z), float(w @ (z * z)), reasons)

    def random_sums(tau2: float) -> tuple[float, float]:
        w_star = 1.0 / (1.0 / w + tau2)
        return float(w_star.sum()), float(w_star @ z)

    return meta_analysis_from_sums(sums, random_sums, level)


def _equal_weights(sums: FisherZSums) -> bool:
    """Whether every session has the same weight (k sum w^2 = (sum w)^2), as in a council
    whose every session has the same number of answers. Weights are whole numbers (n - 3),
    so the test is made in exact integers: the floats' products would round above 2^53."""
    if not (sums.sw.is_integer() and sums.sw2.is_integer()):
        return False
    return sums.k * int(sums.sw2) == int(sums.sw) ** 2


def meta_analysis_from_sums(sums: FisherZSums, random_sums: RandomSums, level: float = 0.95) -> MetaAnalysis:
    """``meta_analysis`` from the sums of its usable sessions (see ``FisherZSums``)."""
    k, reasons = sums.k, dict(sums.dropped_reasons)
    dropped = sum(reasons.values())
    if k == 0:
        none = Estimate.missing(FIXED, 0, level, se=None)
        return MetaAnalysis(none, Estimate.missing(RANDOM, 0, level, se=None), math.nan, 0, math.nan, math.nan,
                            math.nan, 0, dropped, math.nan, math.nan, math.nan, math.nan, reasons)
    crit = normal_quantile(level)
    sw = sums.sw
    z_fixed = sums.swz / sw
    se_fixed = 1.0 / math.sqrt(sw)
    q = max(sums.swz2 - sums.swz * z_fixed, 0.0)
    df = k - 1
    c = sw - sums.sw2 / sw
    tau2 = max(0.0, (q - df) / c) if c > 0 else 0.0
    i2 = (q - df) / q if q > df else 0.0
    if tau2 == 0.0:
        sw_star, swz_star = sw, sums.swz
    elif _equal_weights(sums):  # then every w* is k / (1/w + tau^2): no second pass needed
        sw_star = k / (k / sw + tau2)
        swz_star = sw_star * z_fixed
    else:
        sw_star, swz_star = random_sums(tau2)
    z_random = swz_star / sw_star
    se_random = 1.0 / math.sqrt(sw_star)
    return MetaAnalysis(
        fixed=_pooled(z_fixed, se_fixed, crit, level, k, FIXED),
        random=_pooled(z_random, se_random, crit, level, k, RANDOM),
        q=q, df=df, q_p_value=chi2_sf(q, df), i2=i2, tau2=tau2, k=k, dropped=dropped,
        z_fixed=z_fixed, se_fixed=se_fixed, z_random=z_random, se_random=se_random, dropped_reasons=reasons,
    )
