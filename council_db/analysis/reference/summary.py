"""Every comparison with the reference, per judge, as the report places it.

The reference raters are the window's human raters, or its gold labels where it has no human
rater; gold labels also get their accuracy figures (gold.py) when people rated too. Sessions
of two answers (pairwise) and of three or more (pointwise) are kept apart: their verdicts
weigh differently (one pair a session against k(k-1)/2) and pointwise scores add agreement on
the scale. A judge's headline ``agreement`` and ``kappa`` are its pairwise ones where it has
any, else its pointwise ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from council_db.analysis.loading.score_data import ScoreData, keep_sessions, log_length_sd
from council_db.analysis.reference import agreement, biases, gold, replacement, scale
from council_db.analysis.reference.items import session_items
from council_db.analysis.reference.kinds import GOLD, HUMAN, JUDGE, reviewer_kinds
from council_db.analysis.reference.verdicts import Answers, Majority, Pairs, answers, majority, pairs, subset
from council_db.analysis.stats.alt_test import EPSILON, MIN_INSTANCES, MIN_RATERS, AltTest, Q
from council_db.analysis.stats.estimate import Estimate


@dataclass(frozen=True)
class Settings:
    tie_tolerance: float = 0.0  # points: a smaller score difference is a tie
    level: float = 0.95
    epsilon: float = EPSILON  # the alternative annotator test's cost-benefit margin
    q: float = Q  # its Benjamini-Yekutieli level
    min_raters: int = MIN_RATERS  # humans an instance needs for that test
    min_instances: int = MIN_INSTANCES  # instances a human needs to be tested


@dataclass(frozen=True)
class Family:
    """One judge on one family of sessions (two answers, or more)."""

    with_reference: agreement.VerdictAgreement
    with_raters: agreement.VerdictAgreement | None  # where two or more raters rated
    below_ceiling: Estimate | None  # with_raters' agreement minus the raters' own; one-sided p
    replacement: AltTest | None  # where instances have min_raters humans
    alpha: Estimate | None = None  # pointwise: on the scale, against single raters
    mean_difference: Estimate | None = None  # pointwise: judge minus the raters' mean score


@dataclass(frozen=True)
class JudgeReference:
    judge: str
    pairwise: Family | None
    pointwise: Family | None
    gold: gold.GoldAccuracy | None
    length: biases.Contrast
    first_slot: biases.Contrast
    self_preference: biases.SelfPreference | None
    reasoning_chain: Estimate

    @property
    def headline(self) -> Family | None:
        return self.pairwise or self.pointwise

    @property
    def agreement(self) -> Estimate | None:
        return self.headline.with_reference.agreement if self.headline else None

    @property
    def kappa(self) -> Estimate | None:
        return self.headline.with_reference.kappa if self.headline else None


@dataclass(frozen=True)
class Ceiling:
    """The reference raters among themselves, where two or more rated the same answers."""

    pairwise: agreement.VerdictAgreement | None
    pointwise: agreement.VerdictAgreement | None
    alpha: Estimate | None  # pointwise, on the scale

    @property
    def headline(self) -> agreement.VerdictAgreement | None:
        return self.pairwise or self.pointwise


@dataclass(frozen=True)
class ReferenceSummary:
    reference_kind: str  # "human" or "gold"
    raters: list[str]
    judges: list[JudgeReference]
    ceiling: Ceiling
    no_majority: int  # answer pairs the raters rated without a strict majority: left out
    items: int  # distinct items among the sessions (the resampled clusters)
    sessions: int = 0  # sessions a reference rater scored: the only ones compared
    gold_pairs: int = 0  # two-answer pairs with a gold verdict


def reference_summary(data: ScoreData, kinds: Mapping[str, str], settings: Settings = Settings()) \
        -> ReferenceSummary | None:
    """Each judge against the reference raters; None when the window has no reference rater."""
    kind = reviewer_kinds(data, kinds)
    humans, golds, judges = (np.flatnonzero(kind == k) for k in (HUMAN, GOLD, JUDGE))
    raters = humans if len(humans) else golds
    if not len(raters):
        return None
    sd = log_length_sd(data)  # the window's unit for length effects, as the report's
    item, data = _rated_sessions(data, np.r_[humans, golds], session_items(data))
    n_items = int(item.max()) + 1 if len(item) else 0
    found = answers(data)
    every = pairs(found, settings.tie_tolerance)
    two, more = subset(every, every.two_candidates), subset(every, ~every.two_candidates)
    families = {name: (part, majority(part, raters)) for name, part in (("pairwise", two), ("pointwise", more))}
    gold_two = majority(two, golds) if len(golds) else None
    orders = gold.order_verdicts(data, found, two, settings.tie_tolerance) if len(golds) else None
    pointwise_answers = np.isin(found.session, more.session)
    reference = majority(every, raters)
    judged = []
    for judge in judges.tolist():
        judged.append(JudgeReference(
            judge=data.reviewers[judge],
            pairwise=_family(two, families["pairwise"][1], judge, humans, item, n_items, settings),
            pointwise=_family(more, families["pointwise"][1], judge, humans, item, n_items, settings,
                              found, pointwise_answers, raters),
            gold=gold.accuracy(orders, two, judge, gold_two, item, settings.level)
            if gold_two is not None and np.isfinite(two.verdicts[:, judge]).any() else None,
            length=biases.length(data, judge, raters, item, sd),
            first_slot=biases.first_slot(data, judge, raters, item),
            self_preference=biases.self_preference(data, found, every, judge, reference, item),
            reasoning_chain=biases.reasoning_chain(found, every, judge, reference, item, sd),
        ))
    ceiling = Ceiling(
        *(_among(part, verdicts, item, n_items, settings.level) for part, verdicts in families.values()),
        alpha=_scale_ceiling(found, pointwise_answers, raters, item, settings.level))
    return ReferenceSummary(HUMAN if len(humans) else GOLD, [data.reviewers[r] for r in raters], judged, ceiling,
                            sum(verdicts.no_majority for _, verdicts in families.values()), n_items,
                            sessions=data.n_sessions,
                            gold_pairs=int(np.isfinite(gold_two.verdict).sum()) if gold_two is not None else 0)


def _rated_sessions(data: ScoreData, reference: np.ndarray, item: np.ndarray) -> tuple[np.ndarray, ScoreData]:
    """Only the sessions a reference rater scored (nothing else is compared), with their items
    renumbered: items are read off the whole window, where a council's candidates recur."""
    rated = np.zeros(data.n_sessions, dtype=bool)
    rated[data.session[np.isin(data.reviewer, reference)]] = True
    return np.unique(item[rated], return_inverse=True)[1].astype(np.int64), keep_sessions(data, rated)


def _family(part: Pairs, reference: Majority, judge: int, humans: np.ndarray, item: np.ndarray, n_items: int,
            settings: Settings, found: Answers | None = None, use: np.ndarray | None = None,
            raters: np.ndarray | None = None) -> Family | None:
    """The judge on one family's pairs (with ``found`` and ``use``: the pointwise answers)."""
    judged = np.isfinite(part.verdicts[:, judge])
    if not (judged & np.isfinite(reference.verdict)).any():
        return None
    twice = (judged & (reference.counts.sum(axis=1) >= 2)).any()
    common = dict(
        with_reference=agreement.with_reference(part, judge, reference, item, n_items, settings.level),
        with_raters=agreement.with_raters(part, judge, reference, item, n_items, settings.level) if twice else None,
        below_ceiling=agreement.below_ceiling(part, judge, reference, item, settings.level) if twice else None)
    test = dict(epsilon=settings.epsilon, q=settings.q, min_raters=settings.min_raters,
                min_instances=settings.min_instances)
    if found is None:
        tested = replacement.on_pairs(part, judge, humans, item, **test) if len(humans) else None
        return Family(**common, replacement=_if_tested(tested))
    tested = replacement.on_scores(found, use, judge, humans, item, **test) if len(humans) else None
    return Family(**common, replacement=_if_tested(tested),
                  alpha=scale.alpha(found, use, judge, raters, item, settings.level),
                  mean_difference=scale.mean_difference(found, use, judge, raters, item, settings.level))


def _if_tested(found: AltTest | None) -> AltTest | None:
    """The test where any instance had enough humans, else None (nothing to say)."""
    return found if found is not None and found.instances else None


def _among(part: Pairs, reference: Majority, item: np.ndarray, n_items: int, level: float) \
        -> agreement.VerdictAgreement | None:
    if not (reference.counts.sum(axis=1) >= 2).any():
        return None
    return agreement.among_raters(part, reference, item, n_items, level)


def _scale_ceiling(found: Answers, use: np.ndarray, raters: np.ndarray, item: np.ndarray, level: float) \
        -> Estimate | None:
    if not (np.isfinite(found.scores[use][:, raters]).sum(axis=1) >= 2).any():
        return None
    return scale.among_raters(found, use, raters, item, level)
