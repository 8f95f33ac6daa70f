"""The report's contract for agreement with the reference (human raters or gold labels): each
judge's ``reference`` object in ``reviewers`` and the report's top-level ``reference``.

Plain msgspec structs (model.py imports these, so they cannot import its ``Contract``); every
figure is a ``ReferenceMetric``: the estimate, its 95% CI, the sessions it rests on, and how
it was had. How each is estimated: docs/methods.md, "Agreement with people and gold labels".
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta


class ReferenceMetric(msgspec.Struct, kw_only=True):
    estimate: Annotated[float | None, Meta(description='null only for a share over no verdicts')]
    ci_low: float | None
    ci_high: float | None
    n_sessions: int
    confidence: Annotated[Literal["insufficient", "preliminary", "moderate", "high"], Meta(description=(
        "ADR-018's tier for the figure's own sessions"))]
    p_value: float | None = None
    method: str = ""


class ReferenceShare(ReferenceMetric, kw_only=True):
    count: Annotated[int, Meta(description='the verdicts (or pairs) that count as right')]
    of: Annotated[int, Meta(description='the verdicts (or pairs) the share is over')]


class VerdictFigures(msgspec.Struct, kw_only=True):
    agreement: Annotated[ReferenceMetric | None, Meta(description=(
        "raw agreement over three classes (second better, tie, first better): MT-bench's S1, ties kept"))]
    kappa: Annotated[ReferenceMetric | None, Meta(description="Cohen's kappa over the same three classes (S1)")]
    agreement_without_ties: Annotated[ReferenceMetric | None, Meta(description=(
        "raw agreement over the pairs neither side called a tie: MT-bench's S2"))]
    kappa_without_ties: Annotated[ReferenceMetric | None, Meta(description="Cohen's kappa over the S2 pairs")]
    tau_b: Annotated[ReferenceMetric | None, Meta(description="Kendall's tau-b over the same pairs")]
    pairs: Annotated[float, Meta(description='answer pairs compared, each weighing 1')]
    sessions: int
    items: Annotated[int, Meta(description='distinct items: the clusters the CIs resample')]


class Replacement(msgspec.Struct, kw_only=True):
    """The alternative annotator test (Calderon, Reichart & Dror 2025)."""

    metric: str
    epsilon: float
    q: float
    humans_tested: int
    humans_skipped: Annotated[int, Meta(description='humans with too few instances to be tested')]
    instances: int
    winning_rate: Annotated[float | None, Meta(description='share of tested humans the judge beats (BY at q)')]
    advantage_probability: float | None
    passed: Annotated[bool | None, Meta(description='winning rate >= 0.5: the judge could replace a rater')]


class FamilyFigures(msgspec.Struct, kw_only=True):
    """A judge on one family of sessions: two answers (pairwise) or more (pointwise)."""

    with_reference: Annotated[VerdictFigures, Meta(description="against the reference raters' majority verdict")]
    with_raters: Annotated[VerdictFigures | None, Meta(description=(
        'against single raters, where two or more rated: comparable with the raters among themselves'))] = None
    below_ceiling: Annotated[ReferenceMetric | None, Meta(description=(
        "with_raters' agreement minus the raters' agreement among themselves; one-sided p of 'not below'"))] = None
    replacement: Replacement | None = None
    alpha: Annotated[ReferenceMetric | None, Meta(description=(
        "pointwise: Krippendorff's alpha (interval) with one rater at a time"))] = None
    mean_difference: Annotated[ReferenceMetric | None, Meta(description=(
        "pointwise: the judge's score minus the raters' mean score of each answer"))] = None


class GoldFigures(msgspec.Struct, kw_only=True):
    """Accuracy against gold labels on two-answer sessions, as LLMBar and JudgeBench count it."""

    labelled: Annotated[int, Meta(description='answer pairs with a gold verdict')]
    unjudged: Annotated[int, Meta(description=(
        "labelled pairs the judge gave no verdict on in either order (LLMBar counts these as wrong in both orders "
        "and as the same verdict in both)"))]
    accuracy_listed: Annotated[ReferenceShare, Meta(description=(
        "verdicts with the pair's first answer shown first (LLMBar's correct_False)"))]
    accuracy_swapped: Annotated[ReferenceShare, Meta(description="with it shown second (LLMBar's correct_True)")]
    accuracy: Annotated[ReferenceShare, Meta(description='every verdict of every order')]
    both_correct: Annotated[ReferenceShare, Meta(description='pairs judged in both orders, right in both')]
    same_verdict: Annotated[ReferenceShare, Meta(description='pairs judged in both orders, the same verdict in both')]
    net_correct: Annotated[ReferenceShare, Meta(description="JudgeBench's net rule over the pair's orders")]


class Contrast(msgspec.Struct, kw_only=True):
    difference: Annotated[ReferenceMetric | None, Meta(description="the judge's effect minus the raters'; p tests 0")]
    judge: ReferenceMetric | None
    reference: ReferenceMetric | None


class SelfPreferenceFigures(msgspec.Struct, kw_only=True):
    excess: Annotated[ReferenceMetric | None, Meta(description=(
        "P(own answer | the reference preferred the other) minus the judge's error rate on pairs without its own"))]
    own_when_reference_prefers_own: ReferenceMetric | None
    own_when_reference_ties: ReferenceMetric | None
    own_when_reference_prefers_other: ReferenceMetric | None


class JudgeReference(msgspec.Struct, kw_only=True):
    """One judge against the reference (a reviewer's ``reference`` object)."""

    family: Annotated[Literal["pairwise", "pointwise"], Meta(description='where agreement and kappa come from')]
    agreement: Annotated[ReferenceMetric | None, Meta(description=(
        "the headline: raw agreement with the reference's majority (S1), pairwise sessions where there are any"))]
    kappa: Annotated[ReferenceMetric | None, Meta(description="Cohen's kappa beside it (S1)")]
    pairwise: FamilyFigures | None = None
    pointwise: FamilyFigures | None = None
    gold: GoldFigures | None = None
    length: Annotated[Contrast | None, Meta(description=(
        "points per SD of log length within (session, reviewer), the judge's minus the raters'"))] = None
    first_slot: Annotated[Contrast | None, Meta(description=(
        "points the first-shown answer gains, the judge's minus the raters'"))] = None
    self_preference: SelfPreferenceFigures | None = None
    reasoning_chain: Annotated[ReferenceMetric | None, Meta(description=(
        "slope of the judge's verdict for the reference's worse answer on how much longer it is (SD of log "
        "length): positive, length talks the judge into the wrong answer"))] = None


class ReferenceOverview(msgspec.Struct, kw_only=True):
    """The reference raters among themselves (the human ceiling) and the window's gold labels."""

    kind: Annotated[Literal["human", "gold"], Meta(description=(
        "the reference: the window's human raters, or its gold labels where no human rated"))]
    raters: list[str]
    sessions: Annotated[int, Meta(description='sessions a reference rater scored: the only ones compared')]
    items: Annotated[int, Meta(description='distinct items among them (the clusters)')]
    no_majority: Annotated[int, Meta(description='answer pairs without a strict majority of raters: left out')]
    agreement: Annotated[ReferenceMetric | None, Meta(description=(
        'the raters agreeing with each other (S1), where two or more rated the same pair'))] = None
    kappa: Annotated[ReferenceMetric | None, Meta(description="their kappa (Scott's pi over rater pairs)")] = None
    pairwise: VerdictFigures | None = None
    pointwise: VerdictFigures | None = None
    alpha: Annotated[ReferenceMetric | None, Meta(description=(
        "pointwise: the raters' Krippendorff's alpha (interval) among themselves"))] = None
    gold_pairs: Annotated[int, Meta(description='two-answer pairs with a gold verdict')] = 0
    gold_accuracy: Annotated[dict[str, ReferenceShare], Meta(description=(
        "each judge's accuracy against the gold labels, every verdict of every order"))] = msgspec.field(
        default_factory=dict)
