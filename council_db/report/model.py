"""The bias report's contract: pydantic models, serialised as the JSON of
`council-db bias-report --format json` (schema: `council-db bias-report --schema`).

Every number that estimates something is a Metric: estimate, 95% CI, the sessions and
records it rests on, and a confidence tier. A metric that cannot be computed is null,
and a warning says why.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Tier = Literal["insufficient", "preliminary", "moderate", "high"]
REPORT_SCHEMA_VERSION = "1.1.0"


class Metric(BaseModel):
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    n_sessions: int
    n_records: int
    confidence: Tier
    p_value: float | None = None


class SlotMetric(Metric):
    position: int = Field(description="display slot, 0 = shown first")


class AgreementMetric(Metric):
    units: int = Field(description="answers scored by at least two different reviewers: the only ones alpha "
                                   "counts; n_records is their scores (one per reviewer: a reviewer's repeat of "
                                   "an answer is self-consistency, not agreement), n_sessions their sessions")


class Sample(BaseModel):
    sessions: int = Field(description="sessions the record-level analyses used")
    of: int = Field(description="sessions in the window")
    method: str


class ReportWindow(BaseModel):
    start: str | None = Field(description="time of the first session in the report (UTC)")
    end: str | None = Field(description="time of the last session in the report (UTC)")
    sessions: int
    records: int
    scale: str = Field(description="the score scale analysed; records on other scales are excluded")
    as_of: str | None = None
    filters: dict[str, list[str] | int | float | str] = Field(default_factory=dict)
    sample: Sample | None = Field(default=None, description=(
        "set when the window is larger than the sample size: the joint model, reviewers, slots, agreement and "
        "position consistency use a sample of sessions (each metric's n says so); counts and the "
        "naive, meta-analytic and within-session length correlations use every session"))


class Heterogeneity(BaseModel):
    q: float
    df: int
    i2: float
    tau2: float
    sessions_used: int
    sessions_dropped: int


class Length(BaseModel):
    headline: Metric | None = Field(
        description="within-session correlation of log length and score; CI from resampling sessions, or "
                    "cluster-robust analytic when computed from per-session sums of a sampled window")
    headline_method: str | None = Field(default=None, description="how the headline and its CI were computed")
    naive_pooled_r: Metric | None = Field(description="llm-council's pooled correlation: naive, CI too narrow")
    fixed_effect_r: Metric | None
    random_effects_r: Metric | None
    heterogeneity: Heterogeneity | None
    adjusted_effect: Metric | None = Field(
        description="joint model: score points per SD of log length, within candidate model")
    adjusted_effect_per_log_length: Metric | None
    log_length_sd: float | None
    disagreement: str | None = Field(description="set when the estimators point different ways")


class Consistency(BaseModel):
    first_shown_wins: Metric = Field(description="share of decided judgments (ties left out) of a pair seen "
                                                 "in both orders won by the answer shown first; 0.5 = no "
                                                 "position effect, and p_value tests share = 0.5 "
                                                 "(clustered by session)")
    pattern: Literal["primacy", "recency", "none"]
    pairs: int


class PositionTest(BaseModel):
    statistic: float
    df1: int
    df2: int
    p_value: float


class SwapConsistency(BaseModel):
    swaps: int = Field(description="pairs a reviewer scored in both orders in one session (a swap design)")
    consistent: Metric | None = Field(description="position consistency: share of swapped pairs with the same "
                                                  "preference in both orders (tied in both counts)")
    primacy: int = Field(description="swapped pairs where the answer shown first was preferred in both orders")
    recency: int = Field(description="swapped pairs where the answer shown second was preferred in both orders")
    one_tie: int = Field(description="swapped pairs with a preference in one order and a tie in the other")
    first_preferred: Metric | None = Field(description="primacy / (primacy + recency): which way the flipped "
                                                       "pairs lean; p_value tests 0.5")


class ReviewerPosition(BaseModel):
    reviewer_id: str
    slot_effects: list[SlotMetric] = Field(description=(
        "the joint model fitted to this reviewer's own scores, relative to its average slot; empty when not "
        "identified (it saw each candidate in one slot only)"))
    test: PositionTest | None = Field(description="all of this reviewer's slots equal (needs 10 sessions)")
    first_shown_wins: Metric | None = Field(description="as consistency.first_shown_wins, this reviewer's "
                                                        "judgments only (needs 10 sessions)")
    swaps: SwapConsistency | None


class Position(BaseModel):
    records_used: int
    records_left_out: int = Field(description="records whose position is not a display slot "
                                              "(schema < 1.2.0, or no position given)")
    slot_means: list[SlotMetric] = Field(description="raw mean score per slot, a figure (p_value null): the "
                                                    "slot effects and the test are the position tests")
    slot_effects: list[SlotMetric] = Field(description="joint model, relative to the average slot")
    test: PositionTest | None
    consistency: Consistency | None
    by_reviewer: list[ReviewerPosition] = Field(default_factory=list, description=(
        "position bias per reviewer: pooled, opposite biases of two reviewers cancel"))
    swaps: SwapConsistency | None = Field(default=None, description="every reviewer's swapped pairs together")
    disagreement: str | None = Field(default=None, description=(
        "set when reviewers flagged for position bias lean in opposite directions"))
    designs: dict[str, int] = Field(default_factory=dict, description=(
        "sessions by presentation design: one_shuffle (every reviewer saw one order), per_reviewer (orders "
        "differ between reviewers), balanced (orders differ and every answer was in every slot equally often)"))


class ReviewerProfile(BaseModel):
    reviewer_id: str
    records: int
    raw_mean: Metric
    raw_sd: float | None
    severity: Metric | None = Field(description="joint model: score points relative to the average reviewer; "
                                                "negative = harsh")
    classification: Literal["harsh", "neutral", "generous", "unknown"]
    scale_sd: float | None = Field(description="residual SD of the joint model: how widely it uses the scale")
    self_preference: Metric | None = Field(
        description="its scores of its own answers minus other reviewers' scores of the same answers, "
                    "adjusted for its severity")
    severity_drifts: bool = Field(default=False, description=(
        "its trend over time is flagged (q <= 0.05): severity is a window average, and recent_severity "
        "gives its severity at the window's end"))
    recent_severity: Metric | None = Field(default=None, description=(
        "set when severity_drifts: points vs the average reviewer at recent_severity_at, from a line through its "
        "window-average severity with its residuals' slope in time (vs the average reviewer); 95% CI from the "
        "severity's and the slope's SEs (slope clustered by instant, t with instants - 2 df); n: its dated "
        "sessions and records the line rests on"))
    recent_severity_at: str | None = Field(default=None, description=(
        "the time recent_severity refers to (UTC): the window's last session time"))


class ModelQuality(BaseModel):
    model_id: str
    records: int
    quality: Metric | None = Field(description="joint model: score points relative to the average candidate")


class ChangePoint(BaseModel):
    at: str = Field(description="when the later segment starts (UTC): the first session after the change")
    p_value: float = Field(description="permutation p-value of the change-point search (null: a straight-line "
                                       "trend and no step)")
    q_value: float
    shift: float = Field(description="the step at the change beyond the subject's straight-line trend (a "
                                     "line-plus-step fit of its residuals), relative to the median of the other "
                                     "subjects; descriptive (measured where the change looks largest), no CI")
    sessions_before: int
    sessions_after: int


class Trend(BaseModel):
    subject: str
    kind: Literal["reviewer", "model"]
    slope_per_30d: Metric = Field(description="joint-model residuals on time, fitted within each (reviewer, candidate) "
                                              "pair: score points per 30 days, relative "
                                              "to the typical other subject (the precision-weighted mean slope of "
                                              "the subjects not clearly apart)")
    span_days: float | None = Field(default=None, description="days from the window's first to its last session "
                                                              "time: the span the slope is fitted over")
    change_over_span: Metric | None = Field(
        default=None, description="slope_per_30d x span_days / 30: score points the line moves across the window's "
                                  "own span, relative to the typical other subject; the figure to read when the "
                                  "span is far shorter than 30 days (a per-30-days slope then extrapolates far "
                                  "beyond the data)")
    change_search_p_value: float | None = Field(description="permutation p-value of the change-point search, "
                                                            "against a null that holds a straight-line trend")
    change_points: list[ChangePoint] = Field(description="changes flagged at q <= 0.05 (at most one per subject)")


class Anomaly(BaseModel):
    session_id: str
    p_value: float
    q_value: float
    reason: str


class AffinityCell(BaseModel):
    reviewer_id: str
    model_id: str
    residual_mean: Metric = Field(description="mean joint-model residual of this reviewer's scores of this "
                                              "candidate: liking beyond its severity and the candidate's quality")
    mirror_of: str | None = Field(default=None, description=(
        "set ('reviewer -> model') when this pair is the mirror image of that one: the two are the only pairs "
        "holding a candidate's (two reviewers) or a reviewer's (two candidates) scores, whose residuals sum to "
        "zero, so they are one contrast; only that pair enters the flag family"))


class AnchoringEffect(BaseModel):
    reviewer_id: str | None = Field(description="null: pooled over reviewers")
    effect: Metric = Field(description="slope of the other answers' residuals on the first-shown answer's, minus "
                                       "the same for the last-shown answer; + = assimilation, - = contrast")


class Retest(BaseModel):
    reviewer_id: str
    pairs: int
    mean_abs_difference: Metric = Field(description="mean |difference| between two scores of the same answer; "
                                                    "a figure (p_value null): it is never below 0")


class SelfConsistency(BaseModel):
    measurable: bool
    note: str
    reviewers: list[Retest]
    pairs: int = Field(default=0, description="pairs of scores one reviewer gave one answer, all reviewers")
    identical_share: Metric | None = Field(
        default=None, description="share of those pairs scored identically (n_records: the scores in them)")
    mean_abs_difference: Metric | None = Field(default=None, description="mean |difference| over those pairs")


class Flag(BaseModel):
    kind: Literal["reviewer_severity", "position", "verbosity", "self_preference", "trend", "change_point",
                  "anomaly", "affinity", "anchoring"]
    subject: str
    estimate: float
    p_value: float
    q_value: float
    message: str


class BiasReport(BaseModel):
    report_schema_version: str = REPORT_SCHEMA_VERSION
    generated_at: str
    window: ReportWindow
    confidence: Tier
    excluded: dict[str, int]
    length: Length | None
    position: Position | None
    reviewers: list[ReviewerProfile]
    models: list[ModelQuality]
    self_preference: Metric | None = Field(description="joint model, pooled over reviewers with self-reviews")
    agreement: AgreementMetric | None = Field(
        description="Krippendorff's alpha (interval) between different reviewers of the same answer")
    trends: list[Trend] = Field(default_factory=list)
    anomalies: list[Anomaly] = Field(default_factory=list, description="sessions flagged at q <= 0.05")
    affinity: list[AffinityCell] = Field(default_factory=list)
    anchoring: list[AnchoringEffect] = Field(default_factory=list)
    self_consistency: SelfConsistency | None = None
    flags: list[Flag]
    warnings: list[str]
