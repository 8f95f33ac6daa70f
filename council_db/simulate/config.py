"""What to simulate: ``SimulationConfig``, every effect absent unless planted, and the checks
that refuse a config which would silently simulate something other than what was asked."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

DEFAULT_MODELS = (
    "openai/gpt-4o",
    "anthropic/claude-3-5-sonnet",
    "google/gemini-1.5-pro",
    "meta-llama/llama-3.1-70b",
)
SCORE_SCALE = "1-10"
PAIRWISE_SCALE = "0-1"  # pairwise verdicts: 1 the answer won, 0.5 a tie, 0 it lost
CATEGORIES = ("coding", "math_reasoning", "creative_writing", "general")
TOKEN_BUCKETS = ("short", "medium", "long")
# From this schema version on, `position` is the display slot; before it, the ranking index.
DISPLAY_SLOT_SCHEMA = (1, 2, 0)

MEDIAN_LENGTH_CHARS = 1200
MODEL_LOG_LENGTH_SPREAD = 0.35  # SD across models of a model's mean log length
ANSWER_LOG_LENGTH_SD = 0.5  # SD of one answer's log length around its model's mean
RECORDS_PER_CHUNK = 65_536  # bounds memory; changing it changes the output for a given seed

MIN_TENTHS, MAX_TENTHS = 10, 100  # scores 1.0 .. 10.0 in tenths


class SimulationConfigError(ValueError):
    """A config value is out of range; `field` names the SimulationConfig field at fault."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name


EARLIEST = datetime.min.replace(tzinfo=timezone.utc)  # sessions before it could not be written as times


def _midnight_utc_today() -> datetime:
    return datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)


@dataclass
class SimulationConfig:
    """What to simulate; every effect defaults to "absent" so each can be planted alone."""

    sessions: int = 200
    seed: int = 0
    models: list[str] = field(default_factory=lambda: list(DEFAULT_MODELS))
    reviewers: list[str] | None = None  # None: the council models review
    candidates_per_session: int | None = None  # None: every model answers every session
    model_quality: dict[str, float] = field(default_factory=dict)
    reviewer_offsets: dict[str, float] = field(default_factory=dict)
    position_effects: list[float] = field(default_factory=list)  # per display slot; rest 0
    self_preference: float = 0.0
    verbosity: float = 0.0  # score points per SD of log(length)
    length_quality_corr: float = 0.0  # corr(model mean log length, model quality)
    drift: dict[str, float] = field(default_factory=dict)  # reviewer -> change first..last session
    # reviewer -> model -> share of that model's answers the reviewer scores (default 1: all).
    # Uneven shares make reviewers see different candidate sets, as in judge pipelines that
    # assign reviewers; a record not scored is not written.
    scoring_share: dict[str, dict[str, float]] = field(default_factory=dict)
    drift_at: float | None = None  # None: the drift is linear in time; else a step at this share of the span
    anomaly_rate: float = 0.0
    noise_sd: float = 1.0
    base_score: float = 6.5
    per_reviewer_shuffle: bool = False  # ADR-017 default: one shuffle per session
    # reviewer -> effect per display slot, added to position_effects: reviewers whose position
    # biases differ (even in direction) while the pooled effect is small
    reviewer_position_effects: dict[str, list[float]] = field(default_factory=dict)
    # reviewer -> change of its effect per display slot, shaped in time as ``drift`` (linear, or
    # a step at drift_at): a judge upgrade that moved its slot preference
    position_drift: dict[str, list[float]] = field(default_factory=dict)
    swap_orders: bool = False  # a swap design: each reviewer scores the answers again in reversed order
    schema_version: str = "1.2.0"
    consent_level: int = 1
    council_config_version: str = "0.1.0"
    end: datetime = field(default_factory=_midnight_utc_today)
    days: float = 90.0
    unscored_rate: float = 0.0
    # Real judge data (issue 15), each off by default so existing seeds keep their bytes:
    batch_size: int = 1  # sessions stamped with one time, as a judge run stamps its whole batch
    integer_scale: bool = False  # whole scores 1..10, as GPT-4 grades in MT-bench
    constant_share: float = 0.0  # share of sessions where each reviewer gives every answer one score
    # Reference raters (issue 28), off by default so existing seeds keep their bytes. Humans score
    # like reviewers (their offsets, position effects, noise and verbosity by name in the maps
    # above and below) and are written with "reviewer_kind": "human"; the gold reviewer scores
    # each answer's true quality (base + quality + its answer effect, nothing else), "gold".
    humans: list[str] = field(default_factory=list)
    humans_per_session: int | None = None  # how many humans rate a rated session, drawn anew (None: all)
    gold: str | None = None  # the gold reviewer's name; None: no gold labels
    reference_share: float = 1.0  # share of sessions the humans and the gold label rate
    answer_sd: float = 0.0  # SD of each answer's own quality: what every rater and the gold label see
    reviewer_noise_sd: dict[str, float] = field(default_factory=dict)  # reviewer or human -> noise SD
    reviewer_verbosity: dict[str, float] = field(default_factory=dict)  # reviewer or human -> verbosity
    # Designs of real judge runs (issue 27), each off by default so existing seeds keep their bytes:
    pairwise: bool = False  # a verdict per call of two answers: win 1, tie 0.5, loss 0 (scale 0-1)
    tie_margin: float = 0.5  # pairwise: a tie when the two answers' scores differ by less than this
    # Bradley-Terry verdicts (issue 29), off by default so existing seeds keep their bytes: with
    # pairwise, model_quality are the strengths on the logit scale (simulate/bradley_terry.py)
    bradley_terry: bool = False
    slot_logit: float = 0.0  # log-odds the answer shown first gains
    length_logit: float = 0.0  # log-odds per unit of Arena's normalised length difference
    tie_band: float = 0.0  # Rao-Kupper tie band a on the logit scale (0: no ties)
    strong_band: float | None = None  # set (> tie_band): five-level verdicts, A>>B beyond it
    davidson_tie: float = 0.0  # instead of tie_band: Davidson's tie parameter nu (0: none)
    straggler_days: float = 0.0  # the last session is stamped this many days after the span's end
    late_reviewers: dict[str, float] = field(default_factory=dict)  # reviewer -> share of the span it joins at
    # A rubric's dimensions (issue 30), off by default so existing seeds keep their bytes: each
    # scored record also scores its answer on these names (score_dimensions; simulate/dimensions.py)
    dimensions: list[str] = field(default_factory=list)
    dimension_sd: float = 1.0  # SD of a dimension's score around the record's overall score
    dimension_position_effects: dict[str, list[float]] = field(default_factory=dict)  # name -> per display slot
    dimension_reviewer_offsets: dict[str, dict[str, float]] = field(default_factory=dict)  # name -> reviewer -> X
    # Repeat stability (issue 31), 1 by default so existing seeds keep their bytes: each reviewer
    # scores each answer this many times (the same call again, as Inspect's epochs), each time
    # with its own noise (reviewer_noise_sd), written at display slots slot + repeat x answers
    repeats: int = 1
    # Reviewers drawn from a population (issue 33), 0 by default so existing seeds keep their
    # bytes: each judge's severity, its own effect per display slot and its verbosity drawn
    # from normals with these SDs (from a stream of their own) and added to what is planted
    reviewer_spread: float = 0.0
    reviewer_position_spread: float = 0.0
    reviewer_verbosity_spread: float = 0.0

    def __post_init__(self) -> None:
        if self.end.tzinfo is None:
            self.end = self.end.replace(tzinfo=timezone.utc)
        self.end = self.end.astimezone(timezone.utc)
        _validate(self)

    @property
    def scale(self) -> str:
        return PAIRWISE_SCALE if self.pairwise else SCORE_SCALE

    @property
    def judge_ids(self) -> list[str]:
        """The reviewers that are judges: the council models unless ``reviewers`` names them."""
        return list(self.models) if self.reviewers is None else list(self.reviewers)

    @property
    def reviewer_ids(self) -> list[str]:
        """Everyone who writes scores: the judges, then the humans, then the gold reviewer."""
        return self.judge_ids + list(self.humans) + ([self.gold] if self.gold is not None else [])

    @property
    def reviewer_kinds(self) -> dict[str, str]:
        """Each reviewer that is not a judge, with its kind ("human" or "gold")."""
        return {**{h: "human" for h in self.humans}, **({self.gold: "gold"} if self.gold is not None else {})}

    @property
    def answers_per_session(self) -> int:
        return self.candidates_per_session or len(self.models)

    @property
    def lines_per_reviewer(self) -> int:
        """Lines each reviewer writes per session: one per answer, twice in a swap design, once
        per repeat."""
        return self.answers_per_session * (2 if self.swap_orders else 1) * self.repeats

    @property
    def positions_are_rankings(self) -> bool:
        """Old llm-council (< 1.2.0) wrote the reviewer's ranking index into `position`."""
        return _version_tuple(self.schema_version) < DISPLAY_SLOT_SCHEMA

    @property
    def start(self) -> datetime:
        return self.end - timedelta(days=self.days)


def _version_tuple(version: str) -> tuple[int, ...]:
    parts = version.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise SimulationConfigError(
            "schema_version",
            f"bad schema version {version!r}: expected MAJOR.MINOR.PATCH, e.g. 1.2.0",
        )
    return tuple(int(p) for p in parts)


def _validate(c: SimulationConfig) -> None:
    """Reject configs that would silently simulate something other than what was asked."""

    def check(ok: bool, name: str, message: str) -> None:
        if not ok:
            raise SimulationConfigError(name, message)

    numbers = {
        "base_score": [c.base_score],
        "self_preference": [c.self_preference],
        "verbosity": [c.verbosity],
        "noise_sd": [c.noise_sd],
        "length_quality_corr": [c.length_quality_corr],
        "anomaly_rate": [c.anomaly_rate],
        "unscored_rate": [c.unscored_rate],
        "constant_share": [c.constant_share],
        "tie_margin": [c.tie_margin],
        "straggler_days": [c.straggler_days],
        "late_reviewers": c.late_reviewers.values(),
        "days": [c.days],
        "position_effects": c.position_effects,
        "model_quality": c.model_quality.values(),
        "reviewer_offsets": c.reviewer_offsets.values(),
        "drift": c.drift.values(),
        "reviewer_position_effects": [v for effects in c.reviewer_position_effects.values() for v in effects],
        "position_drift": [v for effects in c.position_drift.values() for v in effects],
        "answer_sd": [c.answer_sd],
        "reference_share": [c.reference_share],
        "reviewer_noise_sd": c.reviewer_noise_sd.values(),
        "reviewer_verbosity": c.reviewer_verbosity.values(),
        "dimension_sd": [c.dimension_sd],
        "reviewer_spread": [c.reviewer_spread],
        "reviewer_position_spread": [c.reviewer_position_spread],
        "reviewer_verbosity_spread": [c.reviewer_verbosity_spread],
        "dimension_position_effects": [v for effects in c.dimension_position_effects.values() for v in effects],
        "dimension_reviewer_offsets": [v for by in c.dimension_reviewer_offsets.values() for v in by.values()],
    }
    for name, values in numbers.items():
        check(all(math.isfinite(v) for v in values), name, f"{name} must be finite numbers")
    for name in ("reviewer_spread", "reviewer_position_spread", "reviewer_verbosity_spread"):
        check(getattr(c, name) >= 0, name, f"{name.replace('_', ' ')} is an SD: it must be >= 0, got {getattr(c, name)}")
    check(c.sessions >= 1, "sessions", f"sessions must be a whole number >= 1, got {c.sessions}")
    _validate_reference(c, check)
    for name, ids in (("models", c.models), ("reviewers", c.reviewer_ids)):
        check(len(ids) > 0, name, f"{name} must list at least one id, e.g. openai/gpt-4o")
        check(len(set(ids)) == len(ids), name, f"{name} must not repeat an id: {', '.join(ids)}")
    m = len(c.models)
    check(
        c.candidates_per_session is None or 1 <= c.candidates_per_session <= m,
        "candidates_per_session",
        f"candidates per session must be between 1 and {m} (the number of models), "
        f"got {c.candidates_per_session}",
    )
    for name, mapping, known in (
        ("model_quality", c.model_quality, c.models),
        ("reviewer_offsets", c.reviewer_offsets, c.reviewer_ids),
        ("drift", c.drift, c.reviewer_ids),
        ("reviewer_position_effects", c.reviewer_position_effects, c.reviewer_ids),
        ("position_drift", c.position_drift, c.reviewer_ids),
        ("reviewer_noise_sd", c.reviewer_noise_sd, c.reviewer_ids),
        ("reviewer_verbosity", c.reviewer_verbosity, c.reviewer_ids),
        ("late_reviewers", c.late_reviewers, c.reviewer_ids),
    ):
        for key in mapping:
            check(key in known, name, f"unknown id {key!r}: expected one of {', '.join(known)}")
    k = c.answers_per_session
    check(
        len(c.position_effects) <= k,
        "position_effects",
        f"{len(c.position_effects)} position effects but sessions show only {k} answers: "
        f"expected at most one value per display slot",
    )
    for reviewer, effects in c.reviewer_position_effects.items():
        check(len(effects) <= k, "reviewer_position_effects",
              f"{len(effects)} position effects for {reviewer!r} but sessions show only {k} answers")
    for reviewer, effects in c.position_drift.items():
        check(len(effects) <= k, "position_drift",
              f"{len(effects)} slot changes for {reviewer!r} but sessions show only {k} answers")
    check(not (c.swap_orders and c.positions_are_rankings), "swap_orders",
          "a swap design needs display slots: schema_version 1.2.0 or later")
    for reviewer, shares in c.scoring_share.items():
        check(reviewer in c.reviewer_ids, "scoring_share",
              f"unknown reviewer {reviewer!r}: expected one of {', '.join(c.reviewer_ids)}")
        for model, share in shares.items():
            check(model in c.models, "scoring_share", f"unknown model {model!r}: expected one of {', '.join(c.models)}")
            check(math.isfinite(share) and 0.0 <= share <= 1.0, "scoring_share",
                  f"scoring share of {model!r} by {reviewer!r} must be between 0 and 1, got {share}")
    check(c.drift_at is None or 0.0 < c.drift_at < 1.0, "drift_at",
          f"drift-at must be a share of the time span strictly between 0 and 1, got {c.drift_at}")
    check(c.batch_size >= 1, "batch_size", f"batch size must be a whole number >= 1, got {c.batch_size}")
    shares = (("anomaly_rate", c.anomaly_rate), ("unscored_rate", c.unscored_rate),
              ("constant_share", c.constant_share), ("reference_share", c.reference_share))
    for name, value in shares:
        check(0.0 <= value <= 1.0, name, f"{name} must be a share between 0 and 1, got {value}")
    check(c.noise_sd >= 0, "noise_sd", f"noise SD must be >= 0, got {c.noise_sd}")
    _validate_designs(c, check)
    check(c.days > 0, "days", f"days must be a number > 0, got {c.days}")
    check((c.end - EARLIEST).total_seconds() > c.days * 86_400, "end",
          f"the {c.days:g} days up to end {c.end.isoformat()} must fall after 0001-01-01 (UTC): give a later end")
    check(
        -1.0 <= c.length_quality_corr <= 1.0,
        "length_quality_corr",
        f"length-quality correlation must be between -1 and 1, got {c.length_quality_corr}",
    )
    qualities = {c.model_quality.get(mid, 0.0) for mid in c.models}
    check(
        c.length_quality_corr == 0 or len(qualities) > 1,
        "length_quality_corr",
        "a length-quality correlation needs model quality that differs between models "
        "(set quality too)",
    )
    check(0 <= c.consent_level <= 4, "consent_level", f"consent level must be 0-4, got {c.consent_level}")
    _version_tuple(c.schema_version)


def _validate_reference(c: SimulationConfig, check) -> None:
    """Human raters and the gold label: names of their own, and a gold label that only knows the truth."""
    check(not set(c.humans) & set(c.models), "humans",
          f"a human rater cannot be named like a candidate model: {', '.join(sorted(set(c.humans) & set(c.models)))}")
    check(c.gold is None or (c.gold and c.gold not in c.models), "gold",
          f"the gold reviewer needs a name of its own, not empty or a model's, got {c.gold!r}")
    check(c.humans_per_session is None or 1 <= c.humans_per_session <= len(c.humans), "humans_per_session",
          f"humans per session must be between 1 and {len(c.humans)} (the number of humans), "
          f"got {c.humans_per_session}")
    check(c.answer_sd >= 0, "answer_sd", f"answer SD must be >= 0, got {c.answer_sd}")
    for name, sd in c.reviewer_noise_sd.items():
        check(sd >= 0, "reviewer_noise_sd", f"noise SD of {name!r} must be >= 0, got {sd}")
    planted = (c.reviewer_offsets, c.drift, c.reviewer_position_effects, c.reviewer_noise_sd, c.reviewer_verbosity,
               c.scoring_share, c.position_drift)
    check(c.gold is None or not any(c.gold in mapping for mapping in planted), "gold",
          f"the gold reviewer {c.gold!r} scores the truth: it takes no offset, drift, position effect, noise, "
          "verbosity or scoring share")


def _validate_designs(c: SimulationConfig, check) -> None:
    """The real judge designs: pairwise verdicts, a late straggler, reviewers joining late."""
    if c.pairwise:
        check(c.answers_per_session == 2, "pairwise",
              f"pairwise verdicts compare two answers: set candidates_per_session to 2 (it is {c.answers_per_session})")
        for name in ("integer_scale", "unscored_rate", "constant_share", "anomaly_rate"):
            check(not getattr(c, name), "pairwise", f"{name} has no meaning for pairwise verdicts: leave it unset")
    check(c.tie_margin >= 0, "tie_margin", f"tie margin must be >= 0, got {c.tie_margin}")
    check(not c.bradley_terry or c.pairwise, "bradley_terry", "Bradley-Terry verdicts are pairwise: set pairwise too")
    check(c.tie_band >= 0, "tie_band", f"the tie band must be >= 0, got {c.tie_band}")
    check(c.strong_band is None or c.strong_band > c.tie_band > 0, "strong_band",
          f"five-level verdicts need 0 < tie_band < strong_band, got {c.tie_band} and {c.strong_band}")
    check(c.davidson_tie >= 0 and not (c.davidson_tie and (c.tie_band or c.strong_band is not None)), "davidson_tie",
          f"Davidson's tie parameter must be >= 0 and replaces tie_band and strong_band, got {c.davidson_tie}")
    _validate_dimensions(c, check)
    check(c.repeats >= 1, "repeats", f"repeats must be at least 1, got {c.repeats}")
    check(c.repeats == 1 or not (c.swap_orders or c.positions_are_rankings), "repeats",
          "repeats are written at display slots of their own: leave swap_orders unset and use schema 1.2.0 or later")
    check(c.straggler_days >= 0, "straggler_days", f"straggler days must be >= 0, got {c.straggler_days}")
    for reviewer, share in c.late_reviewers.items():
        check(0.0 < share < 1.0, "late_reviewers",
              f"{reviewer!r} must join at a share of the span strictly between 0 and 1, got {share}")


def _validate_dimensions(c: SimulationConfig, check) -> None:
    """A rubric's dimensions: distinct names the contract takes, effects on known names and slots."""
    names = c.dimensions
    check(len(names) <= 64 and len(set(names)) == len(names) and all(0 < len(n) <= 100 for n in names),
          "dimensions", f"dimensions must be at most 64 distinct names of 1-100 characters, got {', '.join(names)}")
    check(not (names and c.pairwise), "dimensions", "a pairwise verdict has no rubric dimensions: leave them unset")
    check(c.dimension_sd >= 0, "dimension_sd", f"dimension SD must be >= 0, got {c.dimension_sd}")
    for name, effects in c.dimension_position_effects.items():
        check(name in names, "dimension_position_effects",
              f"unknown dimension {name!r}: expected one of {', '.join(names) or '(none: set dimensions)'}")
        check(len(effects) <= c.answers_per_session, "dimension_position_effects",
              f"{len(effects)} position effects for {name!r} but sessions show only {c.answers_per_session} answers")
    for name, offsets in c.dimension_reviewer_offsets.items():
        check(name in names, "dimension_reviewer_offsets",
              f"unknown dimension {name!r}: expected one of {', '.join(names) or '(none: set dimensions)'}")
        for reviewer in offsets:
            check(reviewer in c.reviewer_ids, "dimension_reviewer_offsets",
                  f"unknown reviewer {reviewer!r}: expected one of {', '.join(c.reviewer_ids)}")
