"""How a game's outcome is modelled, chosen per window from the outcomes it holds.

Every model here is a symmetric cumulative logit on the linear predictor eta (the first
answer's strength minus the second's, plus slot and style terms): the first answer's result
falls in level k with probability F(c_k - eta) - F(c_{k-1} - eta), F the logistic, thresholds
symmetric about 0 so that naming an answer "first" changes nothing but the sign of eta.

- outcomes all 0 or 1: Bradley-Terry (Bradley & Terry 1952), no threshold;
- outcomes in {0, 0.5, 1} with ties: Rao & Kupper's (1967) tie model, thresholds -a, a: ties are
  likelier between close answers, and the same family extends to five levels (Davidson's 1970
  model is the other classic; both fit such data alike, Agresti 2013 ch. 11);
- outcomes on arena-hard's five levels (1, 0.75, 0.5, 0.25, 0: A>>B, A>B, A=B, B>A, B>>A): the
  ordinal model, thresholds -a2, -a1, a1, a2 (McCullagh 1980); or, as an option, arena-hard's own
  reading: A>>B a win counted three times, A>B one win, A=B a tie (here the three-level model);
- any other fraction (AlpacaEval's weighted annotator): quasi-binomial, the outcome a
  fractional win (ties as half wins), as AlpacaEval and Chatbot Arena fit it.

The per-game derivatives below are exact; the fit (bradley_terry) sums them.
"""

from __future__ import annotations

import msgspec
import numpy as np

ROUNDING = 1e-9
STRONG_COUNT = 3.0  # arena-hard: A>>B counts as three wins


class OutcomeModel(msgspec.Struct, frozen=True):
    name: str  # "bradley-terry", "rao-kupper", "ordinal", "quasi-binomial"
    values: np.ndarray  # (L,) each level's result for the first answer, ascending
    thresholds: np.ndarray  # (L-1, T): each threshold as a combination of the T threshold parameters
    description: str

    @property
    def n_params(self) -> int:
        return self.thresholds.shape[1]

    def start(self) -> np.ndarray:
        """Threshold parameters to start the fit from (a tie band, then a strong-verdict band)."""
        return np.array([0.5, 2.0][:self.n_params])

    def feasible(self, a: np.ndarray) -> bool:
        """Thresholds in increasing order: each level has a positive probability."""
        return bool(self.feasible_rows(np.asarray(a)[None, :])[0])

    def feasible_rows(self, a: np.ndarray) -> np.ndarray:
        """``feasible`` of each row of ``a`` (R, T) at once: a thousand resamples' thresholds
        checked in one array operation, not a thousand calls."""
        if not self.n_params:
            return np.ones(len(a), dtype=bool)
        return np.all(np.diff(self.cuts(a), axis=-1) > 0, axis=-1)

    def cuts(self, a: np.ndarray) -> np.ndarray:
        """The thresholds from parameters ``a`` (..., T): (..., L-1)."""
        a = np.asarray(a, dtype=np.float64)
        return a @ self.thresholds.T if self.n_params else np.zeros(a.shape[:-1] + (len(self.values) - 1,))

    def expected(self, eta: np.ndarray, a: np.ndarray) -> np.ndarray:
        """The first answer's expected result (its win rate, ties half) at ``eta`` (..., K) under
        threshold parameters ``a`` (..., T), leading dimensions alike."""
        cdf = _logistic(self.cuts(a)[..., None, :] - np.asarray(eta)[..., None])
        upper = np.concatenate([cdf, np.ones(cdf.shape[:-1] + (1,))], axis=-1)
        lower = np.concatenate([np.zeros(cdf.shape[:-1] + (1,)), cdf], axis=-1)
        return ((upper - lower) * self.values).sum(axis=-1)


BRADLEY_TERRY = OutcomeModel("bradley-terry", np.array([0.0, 1.0]), np.zeros((1, 0)),
                             "Bradley-Terry: every verdict a win or a loss")
QUASI_BINOMIAL = OutcomeModel("quasi-binomial", np.array([0.0, 1.0]), np.zeros((1, 0)),
                              "quasi-binomial Bradley-Terry: a fractional preference counts as that share of a win")
RAO_KUPPER = OutcomeModel("rao-kupper", np.array([0.0, 0.5, 1.0]), np.array([[-1.0], [1.0]]),
                          "Bradley-Terry with Rao-Kupper ties (a tie band of width 2a on the logit scale)")
ORDINAL = OutcomeModel("ordinal", np.array([0.0, 0.25, 0.5, 0.75, 1.0]),
                       np.array([[0.0, -1.0], [-1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]),
                       "ordinal (cumulative logit) Bradley-Terry on the five verdict levels, symmetric thresholds")
STRONG_AS_THREE = OutcomeModel("rao-kupper", RAO_KUPPER.values, RAO_KUPPER.thresholds,
                               "Bradley-Terry with Rao-Kupper ties, a strong verdict (A>>B) counted as three "
                               "wins as arena-hard counts it")


def chosen(outcome: np.ndarray, strong_as_three: bool = False) -> tuple[OutcomeModel, np.ndarray]:
    """The model the window's outcomes call for and each game's weight per level, (G, L)."""
    y = np.asarray(outcome, dtype=np.float64)
    on = lambda values: bool(np.all(np.min(np.abs(y[:, None] - np.array(values)), axis=1) <= ROUNDING))  # noqa: E731
    if on([0.0, 1.0]):
        return BRADLEY_TERRY, _one_hot(y, BRADLEY_TERRY.values)
    if on([0.0, 0.5, 1.0]):
        return RAO_KUPPER, _one_hot(y, RAO_KUPPER.values)
    if on(ORDINAL.values.tolist()):
        if not strong_as_three:
            return ORDINAL, _one_hot(y, ORDINAL.values)
        level = np.rint(np.clip((y - 0.5) * 4.0, -2, 2)).astype(np.int64)  # -2 .. 2
        weights = np.zeros((len(y), 3))
        weights[np.arange(len(y)), np.sign(level) + 1] = np.where(np.abs(level) == 2, STRONG_COUNT, 1.0)
        return STRONG_AS_THREE, weights
    return QUASI_BINOMIAL, np.stack([1.0 - y, y], axis=1)


def _one_hot(y: np.ndarray, values: np.ndarray) -> np.ndarray:
    weights = np.zeros((len(y), len(values)))
    weights[np.arange(len(y)), np.abs(y[:, None] - values).argmin(axis=1)] = 1.0
    return weights


def _logistic(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # NaN thresholds (a resample left out) stay NaN
        return np.exp(-np.logaddexp(0.0, -x))


class Derivatives(msgspec.Struct, frozen=True):
    """Each game's log-likelihood and its derivatives in eta and the threshold parameters."""

    loglik: np.ndarray  # (G,)
    d_eta: np.ndarray  # (G,)
    d_a: np.ndarray  # (G, T)
    dd_eta: np.ndarray  # (G,)
    dd_eta_a: np.ndarray  # (G, T)
    dd_a: np.ndarray  # (G, T, T)


def derivatives(model: OutcomeModel, eta: np.ndarray, a: np.ndarray, weights: np.ndarray) -> Derivatives:
    """Sum over levels of weight x log P(level), and its first and second derivatives. With
    P = F(u) - F(l), u = c_hi - eta, l = c_lo - eta: dlogP/deta = -(f(u) - f(l))/P, and the
    threshold terms through c = thresholds @ a (linear, so no second-order term of its own)."""
    g, n_levels, t = len(eta), len(model.values), model.n_params
    cuts = model.cuts(a)
    out = {name: np.zeros(shape) for name, shape in (("loglik", g), ("d_eta", g), ("d_a", (g, t)), ("dd_eta", g),
                                                      ("dd_eta_a", (g, t)), ("dd_a", (g, t, t)))}
    for level in range(n_levels):
        rows = np.flatnonzero(weights[:, level])  # most games weigh on one level: compute only there
        if not len(rows):
            continue
        w, at = weights[rows, level], eta[rows]
        hi = _side(cuts, level, at, upper=True)
        lo = _side(cuts, level, at, upper=False)
        p = np.maximum(hi[0] - lo[0], 1e-300)
        g_eta = -(hi[1] - lo[1]) / p
        g_hi, g_lo = hi[1] / p, -lo[1] / p
        s_hi = model.thresholds[level] if level < n_levels - 1 else np.zeros(t)
        s_lo = model.thresholds[level - 1] if level > 0 else np.zeros(t)
        out["loglik"][rows] += w * np.log(p)
        out["d_eta"][rows] += w * g_eta
        out["dd_eta"][rows] += w * ((hi[2] - lo[2]) / p - g_eta * g_eta)
        if t:
            out["d_a"][rows] += w[:, None] * (g_hi[:, None] * s_hi + g_lo[:, None] * s_lo)
            h_eta_hi, h_eta_lo = -hi[2] / p - g_hi * g_eta, lo[2] / p - g_lo * g_eta
            out["dd_eta_a"][rows] += w[:, None] * (h_eta_hi[:, None] * s_hi + h_eta_lo[:, None] * s_lo)
            h_hi, h_lo, h_both = hi[2] / p - g_hi * g_hi, -lo[2] / p - g_lo * g_lo, -g_hi * g_lo
            out["dd_a"][rows] += w[:, None, None] * (h_hi[:, None, None] * np.outer(s_hi, s_hi)
                                                     + h_lo[:, None, None] * np.outer(s_lo, s_lo)
                                                     + h_both[:, None, None] * (np.outer(s_hi, s_lo)
                                                                                + np.outer(s_lo, s_hi)))
    return Derivatives(**out)


def _side(cuts: np.ndarray, level: int, eta: np.ndarray, upper: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """F, f and f' at a level's upper (or lower) threshold minus eta; past the last (first)
    threshold F is 1 (0) and f, f' are 0."""
    index = level if upper else level - 1
    if index < 0 or index >= len(cuts):
        return np.full(len(eta), 1.0 if upper else 0.0), np.zeros(len(eta)), np.zeros(len(eta))
    cdf = _logistic(cuts[index] - eta)
    density = cdf * (1.0 - cdf)
    return cdf, density, density * (1.0 - 2.0 * cdf)
