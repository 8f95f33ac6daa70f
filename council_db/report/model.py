"""The bias report's contract: msgspec structs, serialised as the JSON of
`council-db bias-report --format json` (schema: `council-db bias-report --schema`).

Every number that estimates something is a Metric: estimate, 95% CI, the sessions and
records it rests on, and a confidence tier. A metric that cannot be computed is null,
and a warning says why.

msgspec, not pydantic: the report is built by council-db's own code, never parsed from outside,
so it needs no validation, and pydantic's import and model building cost 0.1 s of every report
(a sixth of `bias-report` on a small history). Numbers are written in their shortest form.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from council_db.report.contract_base import Contract, Metric, Tier
from council_db.report.coverage_model import FigureSources
from council_db.report.hierarchical_model import Hierarchical
from council_db.report.identity_model import ReviewerIdentity
from council_db.report.pairwise_model import NotIdentified, PairSelfPreference, PairwiseOdds
from council_db.report.reference_model import JudgeReference, ReferenceOverview
from council_db.report.stability_model import SelfConsistency

# Semantic versioning of this contract: a field added bumps the minor version (readers of the
# old one can ignore it); a field removed, renamed or read another way bumps the major.
REPORT_SCHEMA_VERSION = "1.10.0"


def _plain(value: Any) -> Any:
    """numpy scalars, which the analyses hand over, as the Python numbers they hold."""
    item = getattr(value, "item", None)
    if item is None:
        raise TypeError(f"{type(value).__name__} is not part of the report's contract")
    return item()


class SlotMetric(Metric, kw_only=True):
    position: Annotated[int, Meta(description='display slot, 0 = shown first')]


class AgreementMetric(Metric, kw_only=True):
    units: Annotated[int, Meta(description=(
        'answers scored by at least two different reviewers: the only ones alpha counts; n_records is their '
        "scores (one per reviewer: a reviewer's repeat of an answer is self-consistency, not agreement), "
        'n_sessions their sessions'
    ))]


class Sample(Contract, kw_only=True):
    sessions: Annotated[int, Meta(description='sessions the record-level analyses used')]
    of: Annotated[int, Meta(description='sessions in the window')]
    method: str
    added: Annotated[int, Meta(description='of sessions: those added so every subject has min(its sessions, '
                                           'per_subject)')] = 0
    per_subject: int = 0
    figures: Annotated[FigureSources | None, Meta(description='the sessions each figure rests on')] = None


class ReportWindow(Contract, kw_only=True):
    start: Annotated[str | None, Meta(description=(
        'time of the first session in the report (UTC): the span found in the data; requested_start is the '
        'span asked for'
    ))]
    end: Annotated[str | None, Meta(description=(
        'time of the last session in the report (UTC): the span found in the data; requested_end is the span '
        'asked for'
    ))]
    sessions: int
    records: int
    scale: Annotated[str, Meta(description='the score scale analysed; records on other scales are excluded')]
    as_of: Annotated[str | None, Meta(description=(
        '--as-of as given: sessions after it and imports started after it are left out'
    ))] = None
    requested: Annotated[str | None, Meta(description=(
        "the span asked for, in words, each bound with the option it comes from, e.g. 'every session from "
        "2025-01-30T00:00:00Z (--days 30 before --as-of) to 2025-03-01T00:00:00Z (--as-of)' or 'the latest 100 "
        "sessions, no time bound'"
    ))] = None
    requested_start: Annotated[str | None, Meta(description=(
        'the earliest time asked for (UTC): --since, or --days before --as-of (or before the time of the report), '
        'whichever is later; null: no lower time bound'
    ))] = None
    requested_end: Annotated[str | None, Meta(description=(
        'the latest time asked for (UTC): --as-of (or the time of the report, when a time option is given '
        'without it), or --until when earlier; null: no time bound (--sessions alone, or no option)'
    ))] = None
    filters: dict[str, list[str] | int | float | str] = msgspec.field(default_factory=dict)
    sample: Annotated[Sample | None, Meta(description=(
        'set when the window is larger than the sample size: the joint model, reviewers, slots, agreement and '
        "position consistency use a sample of sessions (each metric's n says so); counts and the naive, "
        'meta-analytic and within-session length correlations use every session'
    ))] = None


class Heterogeneity(Contract, kw_only=True):
    q: float
    df: int
    i2: float
    tau2: float
    sessions_used: int
    sessions_dropped: int


class Length(Contract, kw_only=True):
    headline: Annotated[Metric | None, Meta(description=(
        'within-session correlation of log length and score; CI from resampling sessions, or cluster-robust '
        'analytic when computed from per-session sums of a sampled window'
    ))]
    headline_method: Annotated[str | None, Meta(description='how the headline and its CI were computed')] = None
    naive_pooled_r: Annotated[Metric | None, Meta(description="llm-council's pooled correlation: naive, CI too narrow")]
    fixed_effect_r: Metric | None
    random_effects_r: Metric | None
    heterogeneity: Heterogeneity | None
    adjusted_effect: Annotated[Metric | None, Meta(description=(
        'joint model: score points per SD of log length, within candidate model'
    ))]
    adjusted_effect_per_log_length: Metric | None
    log_length_sd: float | None
    disagreement: Annotated[str | None, Meta(description='set when the estimators point different ways')]


class Consistency(Contract, kw_only=True):
    first_shown_wins: Annotated[Metric, Meta(description=(
        'share of decided judgments (ties left out) of a pair seen in both orders won by the answer shown '
        'first; 0.5 = no position effect, and p_value tests share = 0.5 (clustered by session)'
    ))]
    pattern: Literal["primacy", "recency", "none"]
    pairs: int


class PositionTest(Contract, kw_only=True):
    statistic: float
    df1: int
    df2: int
    p_value: float


class SwapConsistency(Contract, kw_only=True):
    swaps: Annotated[int, Meta(description='pairs a reviewer scored in both orders in one session (a swap design)')]
    consistent: Annotated[Metric | None, Meta(description=(
        'position consistency: share of swapped pairs with the same preference in both orders (tied in both '
        'counts)'
    ))]
    primacy: Annotated[int, Meta(description='swapped pairs where the answer shown first was preferred in both orders')]
    recency: Annotated[int, Meta(description=(
        'swapped pairs where the answer shown second was preferred in both orders'
    ))]
    one_tie: Annotated[int, Meta(description='swapped pairs with a preference in one order and a tie in the other')]
    first_preferred: Annotated[Metric | None, Meta(description=(
        'primacy / (primacy + recency): which way the flipped pairs lean; p_value tests 0.5'
    ))]


class ReviewerPosition(Contract, kw_only=True):
    reviewer_id: str
    slot_effects: Annotated[list[SlotMetric], Meta(description=(
        "the joint model fitted to this reviewer's own scores, relative to its average slot; empty when not "
        'identified (it saw each candidate in one slot only)'
    ))]
    test: Annotated[PositionTest | None, Meta(description="all of this reviewer's slots equal (needs 10 sessions)")]
    first_shown_wins: Annotated[Metric | None, Meta(description=(
        "as consistency.first_shown_wins, this reviewer's judgments only (needs 10 sessions)"
    ))]
    swaps: SwapConsistency | None


class Position(Contract, kw_only=True):
    records_used: int
    records_left_out: Annotated[int, Meta(description=(
        'records whose position is not a display slot (schema < 1.2.0, or no position given)'
    ))]
    slot_means: Annotated[list[SlotMetric], Meta(description=(
        'raw mean score per slot, a figure (p_value null): the slot effects and the test are the position tests'
    ))]
    slot_effects: Annotated[list[SlotMetric], Meta(description='joint model, relative to the average slot')]
    test: PositionTest | None
    consistency: Consistency | None
    by_reviewer: Annotated[list[ReviewerPosition], Meta(description=(
        'position bias per reviewer: pooled, opposite biases of two reviewers cancel'
    ))] = msgspec.field(default_factory=list)
    swaps: Annotated[SwapConsistency | None, Meta(description="every reviewer's swapped pairs together")] = None
    disagreement: Annotated[str | None, Meta(description=(
        'set when reviewers flagged for position bias lean in opposite directions'
    ))] = None
    designs: Annotated[dict[str, int], Meta(description=(
        'sessions by presentation design: one_shuffle (every reviewer saw one order), per_reviewer (orders '
        'differ between reviewers), balanced (orders differ and every answer was in every slot equally often)'
    ))] = msgspec.field(default_factory=dict)


class ReviewerProfile(Contract, kw_only=True):
    reviewer_id: str
    identity: ReviewerIdentity | msgspec.UnsetType = msgspec.UNSET  # only where a log gave its provenance
    records: int
    raw_mean: Metric
    raw_sd: float | None
    severity: Annotated[Metric | None, Meta(description=(
        'joint model: score points relative to the average reviewer; negative = harsh'
    ))]
    severity_reason: Annotated[str | None, Meta(description=(
        "set when severity is null because the design cannot identify it, e.g. 'not identified (pairwise)': see "
        'the top-level not_identified'
    ))] = None
    classification: Literal["harsh", "neutral", "generous", "unknown"]
    scale_sd: Annotated[float | None, Meta(description='residual SD of the joint model: how widely it uses the scale')]
    self_preference: Annotated[Metric | None, Meta(description=(
        "its scores of its own answers minus other reviewers' scores of the same answers, adjusted for its "
        'severity; null on pairwise data, where self_preference_on_pairs states it'
    ))]
    length_effect: Annotated[Metric | None, Meta(description=(
        'joint model: its own score points per SD of log length, within candidate model (length.adjusted_effect is '
        "the mean over reviewers); null where its answers' lengths do not vary within its sessions"))] = None
    self_preference_on_pairs: Annotated[PairSelfPreference | None, Meta(description=(
        'pairwise data: log odds that it picks its own answer, against third judges on the same pair in the same '
        'order (Mantel-Haenszel over pairs, CI clustered by pair)'
    ))] = None
    severity_drifts: Annotated[bool, Meta(description=(
        'its trend over time is flagged (q <= 0.05): severity is a window average, and recent_severity gives '
        "its severity at the window's end"
    ))] = False
    recent_severity: Annotated[Metric | None, Meta(description=(
        'set when severity_drifts: points vs the average reviewer at recent_severity_at, from a line through '
        "its window-average severity with its residuals' slope in time (vs the average reviewer); 95% CI from "
        "the severity's and the slope's SEs (slope clustered by instant, t with instants - 2 df); n: its dated "
        'sessions and records the line rests on'
    ))] = None
    recent_severity_at: Annotated[str | None, Meta(description=(
        "the time recent_severity refers to (UTC): the window's last session time"
    ))] = None
    reference: Annotated[JudgeReference | None, Meta(description=(
        'the judge against the human raters or gold labels, where the window has any (section "Against the '
        'reference")'))] = None


class ModelQuality(Contract, kw_only=True):
    model_id: str
    records: int
    quality: Annotated[Metric | None, Meta(description='joint model: score points relative to the average candidate')]


class ChangePoint(Contract, kw_only=True):
    at: Annotated[str, Meta(description='when the later segment starts (UTC): the first session after the change')]
    p_value: Annotated[float, Meta(description=(
        'permutation p-value of the change-point search (null: a straight-line trend and no step)'
    ))]
    q_value: float
    shift: Annotated[float, Meta(description=(
        "the step at the change beyond the subject's straight-line trend (a line-plus-step fit of its "
        'residuals), relative to the median of the other subjects; descriptive (measured where the change looks '
        'largest), no CI'
    ))]
    sessions_before: int
    sessions_after: int


class Trend(Contract, kw_only=True):
    subject: str
    kind: Literal["reviewer", "model"]
    slope_per_30d: Annotated[Metric, Meta(description=(
        'joint-model residuals on time, fitted within each (reviewer, candidate) pair: score points per 30 '
        'days, relative to the typical other subject (the precision-weighted mean slope of the subjects not '
        'clearly apart)'
    ))]
    span_days: Annotated[float | None, Meta(description=(
        "days from the window's first to its last session time: the span the slope is fitted over"
    ))] = None
    change_over_span: Annotated[Metric | None, Meta(description=(
        "slope_per_30d x span_days / 30: score points the line moves across the window's own span, relative to "
        'the typical other subject; the figure to read when the span is far shorter than 30 days (a per-30-days '
        'slope then extrapolates far beyond the data)'
    ))] = None
    subject_span_days: Annotated[float | None, Meta(description=(
        "days this subject's slope was observed over: the longest first-to-last session time of its (reviewer, "
        'candidate) pairs (the slope is fitted within pairs); far shorter than span_days when the subject took '
        'part in a short stretch of the window only'
    ))] = None
    change_over_subject_span: Annotated[Metric | None, Meta(description=(
        'slope_per_30d x subject_span_days / 30: score points the line moves across the subject\'s own data, '
        'relative to the typical other subject'
    ))] = None
    short_span: Annotated[bool, Meta(description=(
        "true when subject_span_days is less than half the unit the report states slopes in (30 days, or span_days "
        'when shorter): the text, Markdown and HTML reports then state change_over_subject_span instead (a slope '
        'per unit would extrapolate beyond the data), its flag says so, and it is not one of the typical subjects'
    ))] = False
    change_search_p_value: Annotated[float | None, Meta(description=(
        'permutation p-value of the change-point search, against a null that holds a straight-line trend'
    ))]
    change_points: Annotated[list[ChangePoint], Meta(description=(
        'changes flagged at q <= 0.05 (at most one per subject)'
    ))]


class Anomaly(Contract, kw_only=True):
    session_id: str
    p_value: float
    q_value: float
    reason: str


class AffinityCell(Contract, kw_only=True):
    reviewer_id: str
    model_id: str
    residual_mean: Annotated[Metric, Meta(description=(
        "mean joint-model residual of this reviewer's scores of this candidate: liking beyond its severity and "
        "the candidate's quality"
    ))]
    mirror_of: Annotated[str | None, Meta(description=(
        "set ('reviewer -> model') when this pair is the mirror image of that one: the two are the only pairs "
        "holding a candidate's (two reviewers) or a reviewer's (two candidates) scores, whose residuals sum to "
        'zero, so they are one contrast; only that pair enters the flag family'
    ))] = None


class AnchoringEffect(Contract, kw_only=True):
    reviewer_id: Annotated[str | None, Meta(description='null: pooled over reviewers')]
    effect: Annotated[Metric, Meta(description=(
        "slope of the other answers' residuals on the first-shown answer's, minus the same for the last-shown "
        'answer; + = assimilation, - = contrast'
    ))]


class Flag(Contract, kw_only=True):
    kind: Literal["reviewer_severity", "position", "verbosity", "self_preference", "trend", "change_point",
                  "anomaly", "affinity", "anchoring", "below_ceiling"]
    subject: str
    estimate: float
    p_value: float
    q_value: float
    message: str


class BiasReport(Contract, kw_only=True):
    report_schema_version: str = REPORT_SCHEMA_VERSION
    generated_at: str
    window: ReportWindow
    confidence: Tier
    excluded: dict[str, int]
    length: Length | None
    position: Position | None
    reviewers: list[ReviewerProfile]
    models: list[ModelQuality]
    self_preference: Annotated[Metric | None, Meta(description=(
        'joint model, pooled over reviewers with self-reviews; null on pairwise data (self_preference_on_pairs)'
    ))]
    self_preference_on_pairs: Annotated[PairSelfPreference | None, Meta(description=(
        'pairwise data: the common log odds ratio over every judge whose own answer is in a pair (as '
        'reviewers[].self_preference_on_pairs)'
    ))] = None
    agreement: Annotated[AgreementMetric | None, Meta(description=(
        "Krippendorff's alpha (interval) between different reviewers of the same answer"
    ))]
    trends: list[Trend] = msgspec.field(default_factory=list)
    anomalies: Annotated[list[Anomaly], Meta(description=(
        'sessions flagged at q <= 0.05'
    ))] = msgspec.field(default_factory=list)
    affinity: list[AffinityCell] = msgspec.field(default_factory=list)
    anchoring: list[AnchoringEffect] = msgspec.field(default_factory=list)
    self_consistency: SelfConsistency | None = None
    reference: Annotated[ReferenceOverview | None, Meta(description=(
        'human raters and gold labels: the reference the judges are compared with (null: the window has none)'
    ))] = None
    not_identified: Annotated[NotIdentified | None, Meta(description=(
        "set when the design fixes each reviewer's total in a session (pairwise verdicts, rankings): the effects "
        'that live only in those totals'
    ))] = None
    pairwise_model: PairwiseOdds | None = None  # pairwise verdicts: position and length as Bradley-Terry odds
    hierarchical: Hierarchical | msgspec.UnsetType = msgspec.UNSET  # --method bayes (hierarchical_model)
    flags: list[Flag]
    warnings: list[str]


def to_json(report: BiasReport) -> str:
    """The report as `--format json` prints it: indented, one key per line."""
    return msgspec.json.format(msgspec.json.encode(report, enc_hook=_plain), indent=2).decode() + "\n"


def json_schema() -> dict[str, Any]:
    """The JSON Schema of ``to_json``'s document, the report at its top level."""
    schema = msgspec.json.schema(BiasReport)
    definitions = schema["$defs"]
    return {**definitions.pop("BiasReport"), "$defs": definitions}


def to_builtins(report: BiasReport) -> dict[str, Any]:
    """The report as dicts, lists and numbers: what ``json.loads(to_json(report))`` gives."""
    return json.loads(to_json(report))
