"""Position and length on pairwise verdicts in the pairwise model's terms: the Bradley-Terry
model (``analysis/pairwise``) fitted once on the report's games, stated as the odds that the
answer shown first wins (pooled and per judge) and the odds ratio per SD of Arena's normalised
length difference, each net of the candidates' strengths; and those tests as members of the
report's one flag family (p-values on a cluster-robust SE: docs/methods.md, "Pairwise data")."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable

from council_db.analysis.loading.score_data import ScoreData
from council_db.report.model import BiasReport
from council_db.report.pairwise_model import OddsMetric, PairwiseOdds

if TYPE_CHECKING:
    from council_db.analysis.pairwise.slot_odds import Odds, SlotOdds

RELATION = ("the position section's first-shown share is raw (decided verdicts on pairs seen in both orders): a "
            "share s is odds s / (1 - s); these odds are the model's, net of the candidates' strengths")
# kind, subject, estimate, p-value, message: a member of the report's flag family
Candidate = tuple[str, str, float, float, str]


def attach(report: BiasReport, data: ScoreData, metric: Callable) -> None:
    """Fit the model on the report's games (self-judgments left out) and state its odds."""
    # Loaded here, on pairwise verdicts only: a report of scores never fits the model.
    from council_db.analysis.pairwise.games import games_of, without_self_judgments
    from council_db.analysis.pairwise.slot_odds import slot_odds

    found = slot_odds(without_self_judgments(games_of(data)))
    if found is None:
        report.warnings.append("the pairwise model's first-shown odds are null: no game's display order is known")
        return
    report.warnings.extend(f"pairwise model: {warning}" for warning in found.warnings)
    report.pairwise_model = PairwiseOdds(
        outcome_model=found.outcome_model, adjusts_for=_adjusts_for(found),
        first_shown=[stated for odds in found.first_shown if (stated := _odds(odds, metric)) is not None],
        length=None if found.length is None else _odds(found.length, metric), length_unit=found.length_unit,
        relation=RELATION, games=found.n_games, sessions=found.n_sessions)


def _adjusts_for(found: SlotOdds) -> str:
    length = " and the answers' length difference" if found.length is not None else ""
    return f"the candidates' strengths, the display slot per judge{length}, jointly (self-judgments left out)"


def _odds(found: Odds, metric: Callable) -> OddsMetric | None:
    """Log odds with CI and p as the report's figures, the odds ratio beside them."""
    e = found.estimate
    return metric(e, found.games, found.sessions, cls=OddsMetric, name=found.name, judge=found.judge,
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
            out.append(("position", f"{who} (pairwise model)", odds.estimate, odds.p_value,
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
