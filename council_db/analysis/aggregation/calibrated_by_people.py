"""The leaderboard's ``ppi`` method: candidate quality on the people's scale, from the judges on
every session, corrected by the sessions people (or gold labels) also rated.

The *reference raters* are the window's human raters, or its gold labels where no human rated
(as in the bias report's reference section). Per answer, the judges' prediction f is the mean of
the judges' scores of it and the label Y the mean of the reference raters' scores; in a window
where every session has two answers (pairwise) each reviewer's score becomes its verdict on the
pair, 1 win, 0.5 tie, 0 loss, so quality is a win rate. A session is *labelled* when a reference
rater scored any of its answers. Per candidate, its quality is the mean label of its answers,
estimated by prediction-powered inference (stats/prediction_powered.py): the labelled sessions'
mean label, moved by lambda times how far the judges' mean over the unlabelled sessions differs
from theirs over the labelled ones. Beside it: the judges alone (their mean prediction over every
session: the estimate PPI corrects), the labelled sessions alone, and the judges' bias, their
mean prediction minus the label over the labelled answers (lambda = 1: what PPI removes).
Valid when the labelled sessions are a random sample of the window's, which the user's labelling
has to make true; a judge's bias may be anything.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Mapping

import msgspec
import numpy as np

from council_db.analysis.aggregation.leaderboard import Standing
from council_db.analysis.aggregation.quality import rank_interval
from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.reference.kinds import GOLD, HUMAN, JUDGE, reviewer_kinds
from council_db.analysis.reference.verdicts import Answers, answers, pairs
from council_db.analysis.stats.clustered import clustered_mean
from council_db.analysis.stats.estimate import Estimate
from council_db.analysis.stats.prediction_powered import PredictionPowered, prediction_powered_mean
from council_db.errors import CouncilDbError

WIN_RATE, MEAN_SCORE = "win rate", "mean score"
HOW_TO_LABEL = "mark the people's reviewers with council-db reviewers --kind human PATTERN (or import their scores " \
               "with --reviewer-kind human; gold for known right answers)"


@dataclass(frozen=True)
class Calibrated:
    """One candidate's standing and what stands behind it."""

    standing: Standing  # score: the prediction-powered estimate
    lam: float  # the judges' weight (0: the labelled sessions alone)
    labelled_sessions: int
    unlabelled_sessions: int
    judges_only: Estimate  # the judges' mean over every session: what PPI corrects
    labelled_only: Estimate  # the reference's mean over the labelled sessions
    judge_bias: Estimate  # judges minus reference over the labelled answers


@dataclass(frozen=True)
class Ranking:
    candidates: list[Calibrated]  # best first
    reference_kind: str  # human or gold
    raters: list[str]
    judges: list[str]
    quality: str  # WIN_RATE or MEAN_SCORE
    labelled_sessions: int
    unlabelled_sessions: int
    unrated_answers: int  # answers of labelled sessions without a rater's or a judge's score: not used


def people_calibrated(data: ScoreData, kinds: Mapping[str, str], include_self: bool = False,
                      level: float = 0.95) -> Ranking:
    """Every candidate's quality on the reference raters' scale, best first."""
    kind = np.where(np.bincount(data.reviewer, minlength=len(data.reviewers)) > 0, reviewer_kinds(data, kinds), None)
    humans, golds, judges = (np.flatnonzero(kind == k) for k in (HUMAN, GOLD, JUDGE))
    raters = humans if len(humans) else golds
    _check_reviewers(data, kinds, raters, judges)
    found = _own_left_out(data, answers(data)) if not include_self else answers(data)
    quality = WIN_RATE if _pairwise(found) else MEAN_SCORE
    scores = _win_rates(found) if quality == WIN_RATE else found.scores
    judged, rated = _mean_over(scores[:, judges]), _mean_over(scores[:, raters])
    labelled_session = np.zeros(data.n_sessions, dtype=bool)
    labelled_session[found.session[np.isfinite(rated)]] = True
    in_labelled = labelled_session[found.session]
    labelled = in_labelled & np.isfinite(rated) & np.isfinite(judged)
    unlabelled = ~in_labelled & np.isfinite(judged)
    candidates = [_candidate(data, found, number, judged, rated, labelled, unlabelled, level)
                  for number in np.unique(found.model[labelled | unlabelled]).tolist()]
    return Ranking(_ranked(candidates), HUMAN if len(humans) else GOLD, [data.reviewers[r] for r in raters],
                   [data.reviewers[r] for r in judges], quality, int(labelled_session.sum()),
                   len(np.unique(found.session[unlabelled])), int((in_labelled & ~labelled).sum()))


def _check_reviewers(data: ScoreData, kinds: Mapping[str, str], raters: np.ndarray, judges: np.ndarray) -> None:
    """One clear line when the window lacks reference raters or judges, naming the scales when
    one side's scores were left out for being on another scale than the window's."""
    if len(raters) and len(judges):
        return
    others = {reason.split(":", 1)[1]: n for reason, n in data.excluded.items() if reason.startswith("other_scale:")}
    missing = "judges'" if len(raters) else "human or gold raters'"
    if others and (len(raters) or any(k in (HUMAN, GOLD) for k in kinds.values())):
        listed = ", ".join(f"{scale} ({n:,} records)" for scale, n in sorted(others.items()))
        raise CouncilDbError(f"--method ppi: the window's scores are on {data.scale}, but none of its {missing} are "
                             f"(other scales in the window: {listed}); the judges and the reference must score on "
                             "one scale: re-import one side on the other's scale")
    if not len(judges):
        raise CouncilDbError("--method ppi needs judges scoring every session, and every reviewer in this window is "
                             "a human rater or a gold label: rank by --method mean instead")
    raise CouncilDbError(f"--method ppi needs sessions that people or gold labels rated too, and no reviewer in this "
                         f"window is a human rater or a gold label: {HOW_TO_LABEL}")


def _own_left_out(data: ScoreData, found: Answers) -> Answers:
    """The answers without a judge's score of its own answer (self-preference is not quality)."""
    own = np.array(data.reviewers, dtype=object)[None, :] == np.array(data.models, dtype=object)[found.model][:, None]
    return replace(found, scores=np.where(own, np.nan, found.scores))


def _pairwise(found: Answers) -> bool:
    """Every session of the window has exactly two answers."""
    return bool(len(found.session)) and bool((np.bincount(found.session)[np.unique(found.session)] == 2).all())


def _win_rates(found: Answers) -> np.ndarray:
    """Each reviewer's verdict on each answer of a two-answer session: 1 win, 0.5 tie, 0 loss
    (NaN where it did not score both)."""
    both = pairs(found)
    wins = np.full(found.scores.shape, np.nan)
    wins[both.first] = (both.verdicts + 1.0) / 2.0
    wins[both.second] = (1.0 - both.verdicts) / 2.0
    return wins


def _mean_over(columns: np.ndarray) -> np.ndarray:
    """Per row, the mean of its finite values (NaN where it has none)."""
    held = np.isfinite(columns)
    counts = held.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, np.where(held, columns, 0.0).sum(axis=1) / counts, np.nan)


def _candidate(data: ScoreData, found: Answers, number: int, judged: np.ndarray, rated: np.ndarray,
               labelled: np.ndarray, unlabelled: np.ndarray, level: float) -> Calibrated:
    mine = found.model == number
    lab, unl = labelled & mine, unlabelled & mine
    ppi: PredictionPowered = prediction_powered_mean(rated[lab], judged[lab], found.session[lab], judged[unl],
                                                     found.session[unl], level)
    used = lab | unl
    sessions = len(np.unique(found.session[used]))
    standing = Standing(rank=0, model=data.models[number], score=ppi.estimate, rank_low=None, rank_high=None,
                        n_sessions=sessions, n_answers=int(used.sum()),
                        n_records=int(np.isin(found.of_record, np.flatnonzero(used)).sum()))
    return Calibrated(
        standing, ppi.lam, ppi.labelled_clusters, ppi.unlabelled_clusters,
        judges_only=_figure(clustered_mean(judged[used], found.session[used], level)),
        labelled_only=_figure(clustered_mean(rated[lab], found.session[lab], level)),
        judge_bias=clustered_mean(judged[lab] - rated[lab], found.session[lab], level))


def _figure(found: Estimate) -> Estimate:
    """A mean whose test against 0 means nothing (a score, a win rate)."""
    return msgspec.structs.replace(found, p_value=None)


def _ranked(candidates: list[Calibrated]) -> list[Calibrated]:
    """Best first by the estimate (none last), each with its place and its rank interval read
    off the CIs, as the quality method reads its own."""
    def known(c: Calibrated) -> bool:
        return math.isfinite(c.standing.score.estimate)

    order = sorted(filter(known, candidates), key=lambda c: -c.standing.score.estimate) + \
        [c for c in candidates if not known(c)]
    effects = {c.standing.model: c.standing.score for c in order if known(c)}
    ranked = []
    for place, found in enumerate(order, start=1):
        low, high = rank_interval(found.standing.model, list(effects), effects) if known(found) else (None, None)
        ranked.append(replace(found, standing=replace(found.standing, rank=place, rank_low=low, rank_high=high)))
    return ranked
