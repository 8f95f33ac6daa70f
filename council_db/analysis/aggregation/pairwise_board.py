"""`council-db leaderboard --method bradley-terry`: the pairwise model's ranking as the
leaderboard states every method's (``models`` with ``model`` and a ``score`` estimate), plus
what only it has: win rates, the length-controlled win rate against a baseline, and the
``coefficients`` (first shown per judge, style, verdict thresholds) with what each removes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.pairwise.games import games_of, without_self_judgments
from council_db.analysis.pairwise.length_controlled import LengthControlled, length_controlled
from council_db.analysis.pairwise.ranking import Coefficient, Ranking, bradley_terry_ranking
from council_db.analysis.stats import Estimate

N_BOOT = 1000


@dataclass(frozen=True)
class Board:
    models: list[dict[str, Any]]
    top: dict[str, Any]  # the fields beside ``models``: the model, coefficients, separability
    removes: str
    source: str
    interval: str
    warnings: list[str]
    n_sessions: int
    n_games: int


def pairwise_board(data: ScoreData, style: tuple[str, ...], baseline: str | None, include_self: bool,
                   strong_as_three: bool, seed: int = 0, n_boot: int = N_BOOT) -> Board:
    """The window's Bradley-Terry ranking with its coefficients, JSON-ready."""
    games = games_of(data)
    if not include_self:
        games = without_self_judgments(games)
    ranking = bradley_terry_ranking(games, style, baseline, n_boot, seed, strong_as_three)
    controlled = {found.model: found for found in length_controlled(games, baseline, n_boot, seed)} \
        if baseline is not None else {}
    warnings = list(ranking.warnings)
    missing = [s.model for s in ranking.standings if baseline is not None and s.model not in controlled
               and s.model != baseline]
    if missing:
        warnings.append(f"no length-controlled win rate for {', '.join(missing)}: fewer than 3 of its games against "
                        f"{baseline} have both answers' lengths (import the answers, e.g. --answers DIR)")
    far = [name for name, found in controlled.items() if found.far_from_raw]
    if far:
        warnings.append(f"the length-controlled win rate is far from the raw one for {', '.join(far)} (alpaca_eval's "
                        "rule: beyond a quarter of the way to 0 or 100 and 10 points): the length model may not fit")
    models = [{"rank": s.rank, "model": s.model, "score": _estimate(s.strength) | {"n_records": s.games},
               "rank_ci_low": s.rank_low, "rank_ci_high": s.rank_high, "sessions": s.sessions, "games": s.games,
               "win_rate": _estimate(s.win_rate), "never_lost": s.never_lost,
               **({"length_controlled": _controlled(controlled[s.model])} if s.model in controlled else {})}
              for s in ranking.standings]
    return Board(models=models, top=_top(ranking), removes=_removes(ranking, include_self), source=_source(ranking),
                 interval=f"95%, {n_boot} one-step session resamples (seed {seed}), expanded percentile; ranks: "
                          "2.5-97.5% quantiles", warnings=warnings, n_sessions=ranking.n_sessions,
                 n_games=ranking.n_games)


def _top(ranking: Ranking) -> dict[str, Any]:
    return {"outcome_model": {"name": ranking.outcome_model, "description": ranking.outcome_description},
            "strength_scale": "logit: a difference of 1 is odds of e (2.72) to win, ties aside; "
                              + (f"the baseline {ranking.baseline} is 0" if ranking.baseline else "strengths sum to 0"),
            "baseline": ranking.baseline, "win_rate_against": ranking.win_rate_against,
            "separability": _number(ranking.separability), "games": ranking.n_games, "length_unit": ranking.length_unit,
            "prior": ranking.prior,
            "coefficients": {"slot": [_coefficient(c) for c in ranking.slot],
                             "style": [_coefficient(c) for c in ranking.style],
                             "thresholds": [_coefficient(c) for c in ranking.thresholds]}}


def _removes(ranking: Ranking, include_self: bool) -> str:
    """What the model takes out, one clause per covariate it fitted."""
    parts = [ranking.slot[0].removes] if ranking.slot else ["no display slot (no game's display order is known)"]
    parts += [c.removes for c in ranking.style]
    if not ranking.style:
        parts.append("answer length and style stay in (--style length removes length)")
    parts.append("self-judgments kept (self-preference stays in)" if include_self
                 else "self-judgments left out unless --include-self")
    return "; ".join(parts)


def _source(ranking: Ranking) -> str:
    return f"the Bradley-Terry model ({ranking.outcome_model}) over {ranking.n_games:,} games in " \
           f"{ranking.n_sessions:,} sessions"


def _coefficient(found: Coefficient) -> dict[str, Any]:
    odds = {"odds_ratio": _number(math.exp(found.estimate.estimate)) if math.isfinite(found.estimate.estimate)
            else None} if not found.name.startswith("tie") and not found.name.startswith("strong") else {}
    unit = {"per_unit": _estimate(found.per_unit)} if found.per_unit is not None else {}
    return {"name": found.name, **_estimate(found.estimate), **odds, **unit, "removes": found.removes}


def _controlled(found: LengthControlled) -> dict[str, Any]:
    """The LC figures as shares, like every win rate here (alpaca_eval prints them in percent)."""
    share = lambda e: Estimate(e.estimate / 100, e.ci_low / 100, e.ci_high / 100, n_sessions=e.n_sessions)  # noqa: E731
    return {"raw_win_rate": _estimate(share(found.raw)), "lc_win_rate": _estimate(share(found.lc)),
            "length_coefficient": _estimate(found.length), "games": found.games, "far_from_raw": found.far_from_raw}


def _estimate(found: Estimate) -> dict[str, Any]:
    return {"estimate": _number(found.estimate), "ci_low": _number(found.ci_low), "ci_high": _number(found.ci_high),
            "n_sessions": found.n_sessions}


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None
