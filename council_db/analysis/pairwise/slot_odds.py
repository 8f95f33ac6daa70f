"""The first-shown advantage (per judge and pooled) and the length effect in the Bradley-Terry
model's terms, as the bias report states them: one fit of ``bradley_terry`` with the length
covariate when the answers' lengths are known, each coefficient with a cluster-robust
(sandwich) standard error over sessions, its 95% CI and the p of "no effect" on t(G - 1).

The leaderboard's intervals come from the one-step session bootstrap; to first order it draws
from this same sandwich covariance, which costs one pass over the games instead of a thousand
resamples: what keeps the report's cost within a tenth of itself (docs/methods.md).
"""

from __future__ import annotations

import math

import msgspec
import numpy as np

from council_db.analysis.pairwise.bradley_terry import design, fit, robust_covariance
from council_db.analysis.pairwise.games import Games, keep_games
from council_db.analysis.stats import Estimate, t_interval, t_p_value

METHOD = "Bradley-Terry fit, cluster-robust (sandwich) SE over sessions, t(G - 1)"


class Odds(msgspec.Struct, frozen=True):
    name: str  # "first shown, pooled", "first shown, JUDGE" or "length (UNIT), per SD"
    judge: str | None  # None: pooled over judges, or the length effect
    estimate: Estimate  # log odds
    games: int
    sessions: int


class SlotOdds(msgspec.Struct, frozen=True):
    outcome_model: str
    first_shown: list[Odds]  # pooled first, then per judge; a lone judge's only
    length: Odds | None  # per SD of Arena's normalised length difference; None: lengths unknown
    length_unit: str
    n_games: int
    n_sessions: int
    warnings: list[str] = msgspec.field(default_factory=list)


def slot_odds(games: Games) -> SlotOdds | None:
    """The first-shown and length log odds of ``games``; None when no game's display order is known."""
    warnings: list[str] = []
    known = np.isfinite(games.length_diff)
    with_length = bool(known.any() and np.std(games.length_diff[known]) > 0)
    if with_length and not known.all():
        warnings.append(f"{int((~known).sum()):,} of {len(games):,} games left out: their answers' length is unknown")
        games = keep_games(games, known)
    if not games.slot_known.any():
        return None
    found = fit(design(games, games.length_diff[:, None] if with_length else None,
                       [f"length ({games.length_unit})"] if with_length else None))
    if not found.converged:
        warnings.append(f"the fit did not converge in {found.steps} Newton steps: its odds are not to be trusted")
    covariance = robust_covariance(found)
    k, judges = len(found.design.candidates), found.design.slot_judges
    counted = [_counted(games, games.slot_known & (games.reviewer == r)) for r in judges.tolist()]
    per_judge = [Odds(f"first shown, {games.reviewers[r]}", games.reviewers[r],
                      _wald(found.params, covariance, _unit(len(found.params), k - 1 + i), n[1]), *n)
                 for i, (r, n) in enumerate(zip(judges.tolist(), counted))]
    if len(judges) > 1:
        share = np.zeros(len(found.params))
        share[k - 1:k - 1 + len(judges)] = [n[0] for n in counted]
        pooled = _counted(games, games.slot_known)
        per_judge.insert(0, Odds("first shown, pooled", None,
                                 _wald(found.params, covariance, share / share.sum(), pooled[1]), *pooled))
    length = Odds(found.design.style_names[0] + ", per SD", None,
                  _wald(found.params, covariance, _unit(len(found.params), found.design.x.shape[1] - 1),
                        found.n_sessions), len(games), found.n_sessions) if with_length else None
    return SlotOdds(found.design.model.name, per_judge, length, games.length_unit, len(games), found.n_sessions,
                    warnings)


def _counted(games: Games, mine: np.ndarray) -> tuple[int, int]:
    """Games and their sessions."""
    return int(mine.sum()), len(np.unique(games.session[mine]))


def _unit(size: int, at: int) -> np.ndarray:
    out = np.zeros(size)
    out[at] = 1.0
    return out


def _wald(params: np.ndarray, covariance: np.ndarray, weights: np.ndarray, sessions: int) -> Estimate:
    """The combination ``weights @ params`` with its sandwich SE, 95% CI and p on t(G - 1), G
    its sessions (CR1 with t, as the report's other cluster-robust figures)."""
    point, se = float(weights @ params), math.sqrt(max(float(weights @ covariance @ weights), 0.0))
    if not (se > 0 and math.isfinite(se)) or sessions < 2:
        return Estimate(point, math.nan, math.nan, math.nan, math.nan, 0.95, sessions, METHOD)
    low, high = t_interval(point, se, sessions - 1)
    return Estimate(point, low, high, se, t_p_value(point / se, sessions - 1), 0.95, sessions, METHOD)
