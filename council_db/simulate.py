"""Synthetic llm-council bias records with effects planted at known sizes.

An auditor is only worth trusting if it finds the biases we know are there, at
the size they were planted, and nothing else. This module writes JSONL lines
byte-for-byte in the shape llm-council writes them, and returns a "truth" dict
with every planted parameter so tests and benchmarks can check recoveries.

Score of one record (before rounding to 0.1 and clipping to [1, 10])::

    base + quality[model] + offset[reviewer] + position_effects[display slot]
    + self_preference * (reviewer == model) + verbosity * z + drift[reviewer] * t
    + Normal(0, noise_sd)

where z is the answer's log length standardised by the population the lengths
are drawn from and t in [0, 1] is the session's place in time less its mean over
the span, 1/2 (with ``drift_at`` set, a step from 0 to 1 at that share of the span,
likewise centred). Centring keeps each planted effect to one estimand: a drift
changes a reviewer's scores over time but not its average level, which ``offset`` sets.
"""

from __future__ import annotations

import io
import json
import math
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, BinaryIO, TextIO

import numpy as np

DEFAULT_MODELS = (
    "openai/gpt-4o",
    "anthropic/claude-3-5-sonnet",
    "google/gemini-1.5-pro",
    "meta-llama/llama-3.1-70b",
)
SCORE_SCALE = "1-10"
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
    schema_version: str = "1.2.0"
    consent_level: int = 1
    council_config_version: str = "0.1.0"
    end: datetime = field(default_factory=_midnight_utc_today)
    days: float = 90.0
    unscored_rate: float = 0.0

    def __post_init__(self) -> None:
        if self.end.tzinfo is None:
            self.end = self.end.replace(tzinfo=timezone.utc)
        self.end = self.end.astimezone(timezone.utc)
        _validate(self)

    @property
    def reviewer_ids(self) -> list[str]:
        return list(self.models) if self.reviewers is None else list(self.reviewers)

    @property
    def answers_per_session(self) -> int:
        return self.candidates_per_session or len(self.models)

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
        "days": [c.days],
        "position_effects": c.position_effects,
        "model_quality": c.model_quality.values(),
        "reviewer_offsets": c.reviewer_offsets.values(),
        "drift": c.drift.values(),
    }
    for name, values in numbers.items():
        check(all(math.isfinite(v) for v in values), name, f"{name} must be finite numbers")
    check(c.sessions >= 1, "sessions", f"sessions must be a whole number >= 1, got {c.sessions}")
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
    for reviewer, shares in c.scoring_share.items():
        check(reviewer in c.reviewer_ids, "scoring_share",
              f"unknown reviewer {reviewer!r}: expected one of {', '.join(c.reviewer_ids)}")
        for model, share in shares.items():
            check(model in c.models, "scoring_share", f"unknown model {model!r}: expected one of {', '.join(c.models)}")
            check(math.isfinite(share) and 0.0 <= share <= 1.0, "scoring_share",
                  f"scoring share of {model!r} by {reviewer!r} must be between 0 and 1, got {share}")
    check(c.drift_at is None or 0.0 < c.drift_at < 1.0, "drift_at",
          f"drift-at must be a share of the time span strictly between 0 and 1, got {c.drift_at}")
    for name, value in (("anomaly_rate", c.anomaly_rate), ("unscored_rate", c.unscored_rate)):
        check(0.0 <= value <= 1.0, name, f"{name} must be a share between 0 and 1, got {value}")
    check(c.noise_sd >= 0, "noise_sd", f"noise SD must be >= 0, got {c.noise_sd}")
    check(c.days > 0, "days", f"days must be a number > 0, got {c.days}")
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


# --------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class _Plan:
    """The planted parameters as arrays indexed by model / reviewer / slot."""

    quality: np.ndarray  # (M,)
    offsets: np.ndarray  # (R,)
    drift: np.ndarray  # (R,)
    position_effects: np.ndarray  # (K,)
    self_model: np.ndarray  # (R,) index of the reviewer among models, -1 if it is not one
    scoring_share: np.ndarray | None  # (R, M) share of each model's answers each reviewer scores
    model_log_length: np.ndarray  # (M,) mean log length of each model's answers
    log_length_mean: float
    log_length_sd: float


def _build_plan(c: SimulationConfig, rng: np.random.Generator) -> _Plan:
    reviewers = c.reviewer_ids
    quality = np.array([c.model_quality.get(m, 0.0) for m in c.models])
    effects = np.zeros(c.answers_per_session)
    effects[: len(c.position_effects)] = c.position_effects
    log_means = _model_log_lengths(quality, c.length_quality_corr, rng)
    return _Plan(
        quality=quality,
        offsets=np.array([c.reviewer_offsets.get(r, 0.0) for r in reviewers]),
        drift=np.array([c.drift.get(r, 0.0) for r in reviewers]),
        position_effects=effects,
        self_model=np.array([c.models.index(r) if r in c.models else -1 for r in reviewers]),
        scoring_share=np.array([[c.scoring_share.get(r, {}).get(m, 1.0) for m in c.models] for r in reviewers])
        if c.scoring_share else None,
        model_log_length=log_means,
        # Every model answers equally often (all of them, or a uniform random subset),
        # so answers' log lengths are an equal mixture of per-model normals.
        log_length_mean=float(log_means.mean()),
        log_length_sd=float(math.sqrt(ANSWER_LOG_LENGTH_SD**2 + log_means.var())),
    )


def _standardise(x: np.ndarray) -> np.ndarray:
    sd = x.std()
    return (x - x.mean()) / sd if sd > 1e-12 else np.zeros_like(x)


def _model_log_lengths(quality: np.ndarray, corr: float, rng: np.random.Generator) -> np.ndarray:
    """Mean log length per model whose correlation with quality across models is exactly `corr`.

    Exact (not just in expectation) so the "longer AND better" confound has the planted size
    even with 4 models: the random part is made orthogonal to quality before mixing.
    """
    q = _standardise(quality)
    noise = rng.standard_normal(len(quality))
    noise = noise - noise.mean()
    if q.any():
        noise = noise - (noise @ q) / (q @ q) * q
    u = corr * q + math.sqrt(1.0 - corr**2) * _standardise(noise)
    return math.log(MEDIAN_LENGTH_CHARS) + MODEL_LOG_LENGTH_SPREAD * u


# --------------------------------------------------------------------------- simulation


@dataclass
class _Chunk:
    """Consecutive sessions, with per-record arrays already in output line order."""

    session_ids: list[str]
    timestamps: list[str]
    metadata: np.ndarray  # (n,) index into the category x token-bucket table
    lengths: np.ndarray  # (n, K) chars per answer
    columns: np.ndarray  # (n, R, K) which answer each line is about
    models: np.ndarray  # (n, R, K) model index of each line
    tenths: np.ndarray  # (n, R, K) score * 10; 0 = unscored
    anomalies: dict[str, dict[str, Any]]
    written: np.ndarray | None = None  # (n, R, K) False where the reviewer did not score the answer


def _simulate_chunk(
    c: SimulationConfig, plan: _Plan, rng: np.random.Generator, first: int, n: int
) -> _Chunk:
    """Draw `n` sessions starting at session number `first` (all draws in a fixed order)."""
    m, r, k = len(c.models), len(plan.offsets), c.answers_per_session
    session_ids = _session_ids(rng, n)
    timestamps, t = _session_times(c, rng, first, n)
    category = rng.integers(len(CATEGORIES), size=n)
    bucket = rng.integers(len(TOKEN_BUCKETS), size=n)
    metadata = category * len(TOKEN_BUCKETS) + bucket

    if k < m:
        candidates = np.argsort(rng.random((n, m)), axis=1)[:, :k]
    else:
        candidates = np.broadcast_to(np.arange(m), (n, m))
    log_length = plan.model_log_length[candidates]
    log_length = log_length + ANSWER_LOG_LENGTH_SD * rng.standard_normal((n, k))
    lengths = np.maximum(1, np.rint(np.exp(log_length))).astype(np.int64)
    z = (np.log(lengths) - plan.log_length_mean) / plan.log_length_sd

    # slot[s, i, j]: where reviewer i saw answer j (0 = shown first).
    shuffle_shape = (n, r, k) if c.per_reviewer_shuffle else (n, 1, k)
    slot = np.broadcast_to(np.argsort(rng.random(shuffle_shape), axis=-1), (n, r, k))

    score = (
        c.base_score
        + plan.quality[candidates][:, None, :]
        + plan.offsets[None, :, None]
        + plan.position_effects[slot]
        + c.self_preference * (plan.self_model[None, :, None] == candidates[:, None, :])
        + c.verbosity * z[:, None, :]
        + plan.drift[None, :, None] * _drift_shape(c, t)[:, None, None]
        + c.noise_sd * rng.standard_normal((n, r, k))
    )
    tenths = np.clip(np.rint(score * 10), MIN_TENTHS, MAX_TENTHS).astype(np.int64)
    anomalies = _plant_anomalies(c, rng, session_ids, tenths) if c.anomaly_rate > 0 else {}

    # llm-council enumerates a reviewer's answers in `position` order; old schemas ranked them.
    if c.positions_are_rankings:
        columns = np.argsort(-tenths * k + slot, axis=-1)  # best first, ties in display order
    else:
        columns = np.argsort(slot, axis=-1)
    tenths = np.take_along_axis(tenths, columns, axis=-1)
    if c.unscored_rate > 0:
        tenths[rng.random((n, r, k)) < c.unscored_rate] = 0
    models = np.take_along_axis(np.broadcast_to(candidates[:, None, :], (n, r, k)), columns, axis=-1)
    written = None  # drawn only when asked for, so other simulations keep their bytes
    if plan.scoring_share is not None:
        written = rng.random((n, r, k)) < plan.scoring_share[np.arange(r)[None, :, None], models]
    return _Chunk(session_ids, timestamps, metadata, lengths, columns, models, tenths, anomalies, written)


def _drift_shape(c: SimulationConfig, t: np.ndarray) -> np.ndarray:
    """How much of the planted drift a session at time share t carries: t itself (linear), or
    0 before and 1 from ``drift_at`` on (a step: a model updated behind the same name), less
    its mean over the span (sessions are spread evenly), so the drift leaves the reviewer's
    average level alone. Computed per chunk of sessions, hence the mean of the shape, not of t."""
    if c.drift_at is None:
        return t - 0.5
    return (t >= c.drift_at).astype(np.float64) - (1.0 - c.drift_at)


def _session_ids(rng: np.random.Generator, n: int) -> list[str]:
    """uuid4 strings from the seeded generator, so reruns give the same ids."""
    raw = rng.bytes(16 * n)
    return [str(uuid.UUID(bytes=raw[i : i + 16], version=4)) for i in range(0, 16 * n, 16)]


def _session_times(
    c: SimulationConfig, rng: np.random.Generator, first: int, n: int
) -> tuple[list[str], np.ndarray]:
    """Timestamps spread evenly with jitter over (start, end], in session order, and t in [0, 1]."""
    total_us = round(c.days * 86_400_000_000)
    index = np.arange(first, first + n)
    fraction = (index + 1 - rng.random(n)) / c.sessions
    offsets_us = np.rint(fraction * total_us).astype(np.int64)
    start = c.start
    stamps = [(start + timedelta(microseconds=us)).isoformat() for us in offsets_us.tolist()]
    return stamps, offsets_us / total_us


def _plant_anomalies(
    c: SimulationConfig, rng: np.random.Generator, session_ids: list[str], tenths: np.ndarray
) -> dict[str, dict[str, Any]]:
    """Overwrite scores of a random share of sessions; return what was done, by session id."""
    n, r, k = tenths.shape
    hit = np.flatnonzero(rng.random(n) < c.anomaly_rate)
    constant = rng.random(hit.size) < 0.5
    extreme = np.where(rng.random(hit.size) < 0.5, MIN_TENTHS, MAX_TENTHS)
    erratic_reviewer = rng.integers(r, size=hit.size)
    # An erratic reviewer scores each answer at one end of the scale or the other, at random.
    erratic_scores = np.where(rng.random((hit.size, k)) < 0.5, MIN_TENTHS, MAX_TENTHS)
    reviewers = c.reviewer_ids
    planted: dict[str, dict[str, Any]] = {}
    for i, s in enumerate(hit.tolist()):
        if constant[i]:
            tenths[s] = extreme[i]
            planted[session_ids[s]] = {"kind": "constant", "score": int(extreme[i]) / 10}
        else:
            tenths[s, erratic_reviewer[i]] = erratic_scores[i]
            reviewer = reviewers[erratic_reviewer[i]]
            planted[session_ids[s]] = {"kind": "erratic", "reviewer": reviewer}
    return planted


# --------------------------------------------------------------------------- output


class _LineFormatter:
    """Builds JSONL text from string tables, so no record goes through json.dumps.

    Each line is six pieces: session head, reviewer+model, position, length, score, tail.
    The pieces are gathered with numpy object indexing and joined once per chunk.
    The text equals json.dumps(dataclasses.asdict(record)) for llm-council's BiasRecord.
    """

    def __init__(self, c: SimulationConfig) -> None:
        self.head = (
            '{"schema_version": ' + json.dumps(c.schema_version) + ', "session_id": "%s", '
            '"timestamp": "%s", "consent_level": ' + str(int(c.consent_level)) + ', "reviewer_id": '
        )
        self.pairs = np.array(
            [
                [f'{json.dumps(rv)}, "model_id": {json.dumps(md)}, "position": ' for md in c.models]
                for rv in c.reviewer_ids
            ],
            dtype=object,
        )
        self.positions = np.array(
            [f'{p}, "response_length_chars": ' for p in range(c.answers_per_session)], dtype=object
        )
        self.scores = np.array([f"{t // 10}.{t % 10}" for t in range(MAX_TENTHS + 1)], dtype=object)
        self.tails = np.array(
            [
                f', "score_scale": "{SCORE_SCALE}", "council_config_version": '
                f'{json.dumps(c.council_config_version)}, "query_hash": null, "query_metadata": '
                + json.dumps({"category": cat, "token_bucket": bucket, "language": "en"})
                + "}\n"
                for cat in CATEGORIES
                for bucket in TOKEN_BUCKETS
            ],
            dtype=object,
        )

    def format(self, chunk: _Chunk) -> str:
        n, r, k = chunk.tenths.shape
        heads = np.array(
            [self.head % pair for pair in zip(chunk.session_ids, chunk.timestamps)], dtype=object
        )
        lengths = np.array(
            [f'{length}, "score_value": ' for length in chunk.lengths.ravel().tolist()], dtype=object
        )
        pieces = np.empty((n, r, k, 6), dtype=object)
        pieces[..., 0] = heads[:, None, None]
        pieces[..., 1] = self.pairs[np.arange(r)[None, :, None], chunk.models]
        pieces[..., 2] = self.positions
        pieces[..., 3] = lengths[np.arange(n)[:, None, None] * k + chunk.columns]
        pieces[..., 4] = self.scores[chunk.tenths]
        pieces[..., 5] = self.tails[chunk.metadata][:, None, None]
        if chunk.written is not None:
            pieces[~chunk.written] = ""
        return "".join(pieces.ravel().tolist())


def write_jsonl(config: SimulationConfig, out: BinaryIO | TextIO) -> dict[str, Any]:
    """Write the simulated records to `out` (text or binary stream); return the truth dict.

    Sessions are simulated and written in chunks, so memory stays flat for any size.
    """
    rng = np.random.default_rng(config.seed)
    plan = _build_plan(config, rng)
    formatter = _LineFormatter(config)
    text_mode = isinstance(out, io.TextIOBase)
    per_session = len(plan.offsets) * config.answers_per_session
    chunk_sessions = max(1, RECORDS_PER_CHUNK // per_session)
    anomalies: dict[str, dict[str, Any]] = {}
    records = 0
    for first in range(0, config.sessions, chunk_sessions):
        n = min(chunk_sessions, config.sessions - first)
        chunk = _simulate_chunk(config, plan, rng, first, n)
        text = formatter.format(chunk)
        out.write(text if text_mode else text.encode())  # type: ignore[arg-type]
        anomalies.update(chunk.anomalies)
        records += n * per_session if chunk.written is None else int(chunk.written.sum())
    return _truth(config, plan, records, anomalies)


def _truth(
    c: SimulationConfig, plan: _Plan, records: int, anomalies: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Everything planted, JSON-serialisable, with every model/reviewer spelled out (zeros too)."""
    reviewers = c.reviewer_ids
    return {
        "seed": c.seed,
        "sessions": c.sessions,
        "records": records,
        "start": c.start.isoformat(),
        "end": c.end.isoformat(),
        "schema_version": c.schema_version,
        "position_meaning": "ranking" if c.positions_are_rankings else "display_slot",
        "models": list(c.models),
        "reviewers": reviewers,
        "candidates_per_session": c.answers_per_session,
        "per_reviewer_shuffle": c.per_reviewer_shuffle,
        "base_score": c.base_score,
        "noise_sd": c.noise_sd,
        "model_quality": dict(zip(c.models, plan.quality.tolist())),
        "reviewer_offsets": dict(zip(reviewers, plan.offsets.tolist())),
        "position_effects": plan.position_effects.tolist(),
        "self_preference": c.self_preference,
        "verbosity": c.verbosity,
        "length_quality_corr": c.length_quality_corr,
        "log_length_mean": plan.log_length_mean,
        "log_length_sd": plan.log_length_sd,
        "model_log_length_means": dict(zip(c.models, plan.model_log_length.tolist())),
        "drift": dict(zip(reviewers, plan.drift.tolist())),
        "scoring_share": {r: dict(zip(c.models, row)) for r, row in zip(reviewers, plan.scoring_share.tolist())}
        if plan.scoring_share is not None else {},
        "drift_at": c.drift_at,
        "anomaly_rate": c.anomaly_rate,
        "anomalous_sessions": anomalies,
        "unscored_rate": c.unscored_rate,
    }


# --------------------------------------------------------------------------- CLI value parsing


def _items(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def parse_names(text: str) -> list[str]:
    """Parse "a,b,c" into ids (blanks dropped)."""
    return _items(text)


def parse_mapping(text: str) -> dict[str, float]:
    """Parse "a=0.5,b=-1" into {"a": 0.5, "b": -1.0}."""
    result: dict[str, float] = {}
    for item in _items(text):
        name, sep, value = item.rpartition("=")
        name = name.strip()
        try:
            if not sep or not name:
                raise ValueError(item)
            number = _finite(value)
        except ValueError:
            raise ValueError(
                f"bad item {item!r}: expected NAME=NUMBER pairs separated by commas, "
                "e.g. openai/gpt-4o=0.5,google/gemini-1.5-pro=-0.3"
            ) from None
        if name in result:
            raise ValueError(f"{name!r} is given twice: expected each NAME once")
        result[name] = number
    return result


def parse_floats(text: str) -> list[float]:
    """Parse "0.3,0,-0.2" into [0.3, 0.0, -0.2]."""
    values = []
    for item in _items(text):
        try:
            values.append(_finite(item))
        except ValueError:
            raise ValueError(
                f"bad number {item!r}: expected numbers separated by commas, e.g. 0.3,0,-0.2"
            ) from None
    return values


def parse_utc_datetime(text: str) -> datetime:
    """Parse an ISO date or date-time; one without a zone is taken as UTC."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"bad date/time {text!r}: expected ISO 8601, e.g. 2025-12-17 or 2025-12-17T10:30:00+00:00"
        ) from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)
