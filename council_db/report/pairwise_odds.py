"""Position and length on pairwise verdicts in the pairwise model's terms: the Bradley-Terry
model (``analysis/pairwise``) fitted once on the report's games, stated as the odds that the
answer shown first wins (pooled and per judge) and the odds ratio per SD of Arena's normalised
length difference, each net of the candidates' strengths; and those tests as members of the
report's one flag family (Wald p-values on the bootstrap SE: docs/methods.md, "Pairwise data")."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable

import numpy as np

from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.pairwise.games import Games, games_of, keep_games, without_self_judgments
from council_db.analysis.pairwise.ranking import Coefficient, Ranking, bradley_terry_ranking
from council_db.analysis.stats import Estimate, normal_p_value
from council_db.errors import CouncilDbError
from council_db.report.model import BiasReport
from council_db.report.pairwise_model import OddsMetric, PairwiseOdds

FIRST_SHOWN = "first shown, "
RELATION = ("the position section's first-shown share is raw (decided verdicts on pairs seen in both orders): a "
            "share s is odds s / (1 - s); these odds are the model's, net of the candidates' strengths")
# kind, subject, estimate, p-value, message: a member of the report's flag family
Candidate = tuple[str, str, float, float, str]


def attach(report: BiasReport, data: ScoreData, metric: Callable, resamples: int, seed: int) -> None:
    """Fit the model on the report's games (self-judgments left out) and state its odds."""
    games = without_self_judgments(games_of(data))
    with_length = bool(np.isfinite(games.length_diff).any() and np.nanstd(games.length_diff) > 0)
    try:
        ranking = bradley_terry_ranking(games, ("length",) if with_length else (), n_boot=resamples, seed=seed)
    except CouncilDbError as error:
        report.warnings.append(f"the pairwise model's position and length odds are null: {error}")
        return
    report.warnings.extend(f"pairwise model: {warning}" for warning in ranking.warnings)
    if with_length:  # the games the fit kept (it says how many it left out), for the counts
        games = keep_games(games, np.isfinite(games.length_diff))
    report.pairwise_model = PairwiseOdds(
        outcome_model=ranking.outcome_model, adjusts_for=_adjusts_for(ranking),
        first_shown=[odds for c in ranking.slot if (odds := _first_shown(c, games, metric)) is not None],
        length=_length(ranking, metric), length_unit=ranking.length_unit, relation=RELATION,
        games=ranking.n_games, sessions=ranking.n_sessions)


def _adjusts_for(ranking: Ranking) -> str:
    length = " and the answers' length difference" if ranking.style else ""
    return f"the candidates' strengths, the display slot per judge{length}, jointly (self-judgments left out)"


def _first_shown(found: Coefficient, games: Games, metric: Callable) -> OddsMetric | None:
    """The pooled or one judge's first-shown odds (a lone judge's coefficient is named for it)."""
    judge = found.name.removeprefix(FIRST_SHOWN)
    pooled = judge == "pooled"
    mine = games.slot_known if pooled else games.slot_known & (games.reviewer == games.reviewers.index(judge))
    return _odds(found, metric, int(mine.sum()), len(np.unique(games.session[mine])), None if pooled else judge)


def _length(ranking: Ranking, metric: Callable) -> OddsMetric | None:
    if not ranking.style:
        return None
    return _odds(ranking.style[0], metric, ranking.n_games, ranking.n_sessions, None)


def _odds(found: Coefficient, metric: Callable, games: int, sessions: int, judge: str | None) -> OddsMetric | None:
    """A coefficient as the report states it: log odds with CI and Wald p, and its odds ratio."""
    e = found.estimate
    p = normal_p_value(e.estimate / e.se) if e.se is not None and e.se > 0 and math.isfinite(e.se) else None
    return metric(replace(e, p_value=p), games, sessions, cls=OddsMetric, name=found.name, judge=judge,
                    odds_ratio=_exp(e.estimate), odds_ratio_ci_low=_exp(e.ci_low), odds_ratio_ci_high=_exp(e.ci_high))


def _exp(value: float) -> float | None:
    return math.exp(value) if math.isfinite(value) else None


def candidates(report: BiasReport) -> list[Candidate]:
    """The first-shown odds (pooled and per judge, each once) and the length odds as members
    of the report's flag family."""
    model = report.pairwise_model
    if model is None:
        return []
    out = []
    for odds in model.first_shown:
        if odds.p_value is not None:
            who = odds.judge or "pooled over judges"
            out.append(("position", f"first shown ({who})", odds.estimate, odds.p_value,
                        f"first-shown advantage ({who}): odds ratio {odds.odds_ratio:.2f} (95% CI "
                        f"{odds.odds_ratio_ci_low:.2f} to {odds.odds_ratio_ci_high:.2f}) that the answer shown first "
                        f"wins, net of the candidates' strengths ({odds.n_records:,} games)"))
    length = model.length
    if length is not None and length.p_value is not None:
        out.append(("verbosity", "length (pairwise model)", length.estimate, length.p_value,
                    f"verbosity: odds ratio {length.odds_ratio:.2f} (95% CI {length.odds_ratio_ci_low:.2f} to "
                    f"{length.odds_ratio_ci_high:.2f}) per SD of the normalised length difference, net of the "
                    f"candidates' strengths ({length.n_records:,} games)"))
    return out
