"""The report's contract for the hierarchical (empirical Bayes) joint model (issue 33):
``hierarchical``, present when the report is asked for with ``--method bayes`` and absent
otherwise (the default report is the same document as before). Apart from model.py (at its
size limit), on ``contract_base``.

Every figure is a posterior: ``estimate`` its mean, ``ci_low``/``ci_high`` its 95% credible
interval, ``posterior_sd`` and ``p_positive`` = P(effect > 0 | data), with the sessions and
records it rests on. The prior is the populations' fitted spreads, each with how many members
it was estimated from.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from council_db.report.contract_base import Contract, Metric

FDR = 0.05  # flagged: Benjamini-Hochberg q <= FDR over each statement's tail (2 x (1 - P) for a sign)


class Posterior(Metric, kw_only=True):
    posterior_sd: float
    p_positive: Annotated[float, Meta(description='posterior probability that the effect is above 0')]


class SlotPosterior(Posterior, kw_only=True):
    position: Annotated[int, Meta(description='display slot, 0 = shown first')]


class Spread(Contract, kw_only=True):
    component: Annotated[str, Meta(description=(
        'reviewer (severity), candidate (quality), slot (a reviewer\'s own slot effects), length (a reviewer\'s own '
        'length effect, per SD of log length), self (a reviewer\'s own self-preference) or answer (an answer\'s own '
        'quality, shared by every score of it; n: the answers with two or more scores)'))]
    sd: Annotated[float | None, Meta(description=(
        'the population SD REML estimates: the prior of each member\'s effect (null: not pooled, a flat prior: '
        'fewer than 3 members, or a spread the data do not bound)'))]
    n: Annotated[int, Meta(description='members it is estimated from')]


class SeverityPath(Contract, kw_only=True):
    sessions: Annotated[list[int], Meta(description='cut points: sessions seen (at most 50)')]
    estimate: list[float | None]
    ci_low: list[float | None]
    ci_high: list[float | None]


class ReviewerPosterior(Contract, kw_only=True):
    reviewer_id: str
    severity: Annotated[Posterior | None, Meta(description=(
        'points vs the panel\'s average reviewer; P(harsh) = 1 - p_positive'))]
    slot_effects: list[SlotPosterior]
    length: Annotated[Posterior | None, Meta(description='points per SD of log length, within model')]
    self_preference: Posterior | None
    stable_since: Annotated[int | None, Meta(description=(
        'sessions after which the severity\'s posterior mean stayed within 0.5 prior SD of its last (null: no '
        'spread between reviewers, or severity not estimated)'))]
    severity_path: SeverityPath | None


class ModelPosterior(Contract, kw_only=True):
    model_id: str
    quality: Annotated[Posterior | None, Meta(description='points vs the average candidate')]


class BayesFlag(Contract, kw_only=True):
    kind: Annotated[str, Meta(description='reviewer_severity, position, verbosity or self_preference')]
    subject: str
    statement: Annotated[str, Meta(description='what the data make probable, e.g. "harsh"')]
    probability: Annotated[float, Meta(description=(
        'its posterior probability P (position: that the panel\'s slots differ, 1 - the Box-Tiao tail of all '
        'slots equal under their joint posterior)'))]
    q_value: Annotated[float, Meta(description=(
        'Benjamini-Hochberg over 2 x (1 - P) of every statement (position: over 1 - P, the Box-Tiao tail, which '
        'is 2 x (1 - P) for one contrast): flagged at <= 0.05'))]
    metric: Annotated[Posterior, Meta(description='the figure it rests on (position: the slot that leads)')]


class Hierarchical(Contract, kw_only=True):
    method: str
    flag_rule: str
    prior: list[Spread]
    residual_sd: float
    reviewers: list[ReviewerPosterior]
    models: list[ModelPosterior]
    position: Annotated[list[SlotPosterior], Meta(description='the panel\'s slot effects: vs the average slot')]
    length: Annotated[Posterior | None, Meta(description='the panel\'s, points per SD of log length')]
    self_preference: Annotated[Posterior | None, Meta(description=(
        'the unweighted mean over reviewers with self-reviews'))]
    flags: list[BayesFlag]
    warnings: list[str] = msgspec.field(default_factory=list)
