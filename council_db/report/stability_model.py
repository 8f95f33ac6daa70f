"""The report's contract for test-retest and repeat stability (issue 31): ``self_consistency``,
its pooled pairs, each reviewer's mean |difference|, and ``self_consistency.stability``, each
judge's per-item stability, within-item SD, ICC(1) and pass^k. Apart from model.py (at its
size limit), on ``contract_base``. How each is estimated: docs/methods.md, "Repeat stability".
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from council_db.report.contract_base import Contract, Metric


class Retest(Contract, kw_only=True):
    reviewer_id: str
    pairs: int
    mean_abs_difference: Annotated[Metric, Meta(description=(
        'mean |difference| between two scores of the same answer; a figure (p_value null): it is never below 0'
    ))]


class UnstableItem(Contract, kw_only=True):
    session_id: str
    model_id: Annotated[str, Meta(description='the candidate whose answer was scored')]
    scores: Annotated[list[float], Meta(description="the judge's scores of the answer, earliest record first")]


class JudgeStability(Contract, kw_only=True):
    reviewer_id: str
    items: Annotated[int, Meta(description='answers (session, candidate, length) it scored at least twice')]
    repeats: Annotated[dict[str, int], Meta(description=(
        'the k distribution: repeat count k -> items scored k times'
    ))]
    identical: Annotated[Metric | None, Meta(description="share of the items whose scores are all identical")]
    within_one_point: Annotated[Metric | None, Meta(description=(
        'share of the items whose scores all lie within 1 point of each other'
    ))]
    same_verdict: Annotated[Metric | None, Meta(description=(
        'share of the items whose scores all pass or all fail (pass: above the scale\'s midpoint)'
    ))]
    within_item_sd: Annotated[Metric | None, Meta(description=(
        'pooled SD of its scores of one item around their mean, in score points'
    ))]
    reliability: Annotated[Metric | None, Meta(description=(
        'test-retest reliability, ICC(1): the share of its score variance between items, not between repeats '
        '(null: the items do not vary)'
    ))]
    pass_k: Annotated[int, Meta(description="the k of pass_hat_k: the judge's most common repeat count")]
    pass_hat_k: Annotated[Metric | None, Meta(description=(
        'pass^k: mean over items with n >= k repeats (c passing) of C(c,k)/C(n,k), the chance that k repeats all pass'
    ))]
    all_pass_given_any: Annotated[Metric | None, Meta(description=(
        'share of the items passing on every repeat among those passing on one at least'
    ))]
    least_stable: Annotated[list[UnstableItem], Meta(description=(
        'up to 5 items whose scores differ most (range, then SD), for a reader to look at'
    ))] = msgspec.field(default_factory=list)


class RepeatStability(Contract, kw_only=True):
    pass_threshold: Annotated[float, Meta(description='a score above this passes: the scale\'s midpoint')]
    judges: list[JudgeStability]


class SelfConsistency(Contract, kw_only=True):
    measurable: bool
    note: str
    reviewers: list[Retest]
    pairs: Annotated[int, Meta(description='pairs of scores one reviewer gave one answer, all reviewers')] = 0
    identical_share: Annotated[Metric | None, Meta(description=(
        'share of those pairs scored identically (n_records: the scores in them)'
    ))] = None
    mean_abs_difference: Annotated[Metric | None, Meta(description='mean |difference| over those pairs')] = None
    stability: Annotated[RepeatStability | None, Meta(description=(
        'per judge, over the answers it scored k >= 2 times: per-item stability, within-item SD, ICC(1), pass^k'
    ))] = None
