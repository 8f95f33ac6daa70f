"""Drawing sessions: the plan (planted effects as arrays), then scores chunk by chunk in a fixed
order of draws, so a seed always gives the same sessions."""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import numpy as np

from council_db.simulate.bradley_terry import verdicts
from council_db.simulate.config import (
    ANSWER_LOG_LENGTH_SD,
    CATEGORIES,
    MAX_TENTHS,
    MEDIAN_LENGTH_CHARS,
    MIN_TENTHS,
    MODEL_LOG_LENGTH_SPREAD,
    TOKEN_BUCKETS,
    SimulationConfig,
)
from council_db.simulate.population import drawn_effects
from council_db.simulate.raters import answer_effects, reference_raters, reviewer_terms


@dataclass(frozen=True)
class Plan:
    """The planted parameters as arrays indexed by model / reviewer / slot."""

    quality: np.ndarray  # (M,)
    offsets: np.ndarray  # (R,)
    drift: np.ndarray  # (R,)
    position_effects: np.ndarray  # (K,)
    reviewer_position: np.ndarray  # (R, K) each reviewer's own effect per slot, on top of position_effects
    position_drift: np.ndarray  # (R, K) the change of each reviewer's effect per slot, shaped as the drift
    self_model: np.ndarray  # (R,) index of the reviewer among models, -1 if it is not one
    scoring_share: np.ndarray | None  # (R, M) share of each model's answers each reviewer scores
    model_log_length: np.ndarray  # (M,) mean log length of each model's answers
    log_length_mean: float
    log_length_sd: float
    noise_sd: np.ndarray  # (R,) each reviewer's noise SD (0 for the gold reviewer)
    verbosity: np.ndarray  # (R,) each reviewer's points per SD of log length (0 for gold)
    biased: np.ndarray  # (R,) 1.0, 0.0 for the gold reviewer: the shared position effects pass it by
    kind: np.ndarray  # (R,) JUDGE, HUMAN or GOLD


def build_plan(c: SimulationConfig, rng: np.random.Generator) -> Plan:
    reviewers = c.reviewer_ids
    quality = np.array([c.model_quality.get(m, 0.0) for m in c.models])
    effects = np.zeros(c.answers_per_session)
    effects[: len(c.position_effects)] = c.position_effects
    log_means = _model_log_lengths(quality, c.length_quality_corr, rng)
    severity, position, verbosity = drawn_effects(c, c.answers_per_session)
    terms = reviewer_terms(c)
    terms["verbosity"] = terms["verbosity"] + verbosity
    return Plan(
        quality=quality,
        offsets=np.array([c.reviewer_offsets.get(r, 0.0) for r in reviewers]) + severity,
        drift=np.array([c.drift.get(r, 0.0) for r in reviewers]),
        position_effects=effects,
        reviewer_position=_per_slot(c.reviewer_position_effects, reviewers, c.answers_per_session) + position,
        position_drift=_per_slot(c.position_drift, reviewers, c.answers_per_session),
        self_model=np.array([c.models.index(r) if r in c.models else -1 for r in reviewers]),
        scoring_share=np.array([[c.scoring_share.get(r, {}).get(m, 1.0) for m in c.models] for r in reviewers])
        if c.scoring_share else None,
        model_log_length=log_means,
        # Every model answers equally often (all of them, or a uniform random subset),
        # so answers' log lengths are an equal mixture of per-model normals.
        log_length_mean=float(log_means.mean()),
        log_length_sd=float(math.sqrt(ANSWER_LOG_LENGTH_SD**2 + log_means.var())),
        **terms,
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
class Chunk:
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
    constant_sessions: list[str] = field(default_factory=list)  # ids of sessions made constant
    quarters: np.ndarray | None = None  # (n, R, K) five-level verdicts 0..4 (0.25 steps), None otherwise


def simulate_chunk(
    c: SimulationConfig, plan: Plan, rng: np.random.Generator, first: int, n: int
) -> Chunk:
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
    call = np.zeros(k, dtype=np.int64)
    if c.swap_orders:  # a second call per reviewer, the answers in reversed order
        candidates, z, lengths = (np.concatenate([a, a], axis=1) for a in (candidates, z, lengths))
        slot, call = np.concatenate([slot, k - 1 - slot], axis=-1), np.repeat([0, 1], k)
        k = 2 * k
    if c.repeats > 1:  # the same call again: each repeat draws its own noise below
        candidates, z, lengths = (np.tile(a, (1, c.repeats)) for a in (candidates, z, lengths))
        slot, call = np.tile(slot, (1, 1, c.repeats)), np.repeat(np.arange(c.repeats), k)
        k = c.repeats * k

    score = (
        c.base_score
        + plan.quality[candidates][:, None, :]
        + plan.offsets[None, :, None]
        + plan.position_effects[slot] * plan.biased[None, :, None]
        + plan.reviewer_position[np.arange(r)[None, :, None], slot]
        + c.self_preference * (plan.self_model[None, :, None] == candidates[:, None, :])
        + plan.verbosity[None, :, None] * z[:, None, :]
        + plan.drift[None, :, None] * _drift_shape(c, t)[:, None, None]
        + plan.position_drift[np.arange(r)[None, :, None], slot] * _drift_shape(c, t)[:, None, None]
        + plan.noise_sd[None, :, None] * rng.standard_normal((n, r, k))
    )
    if c.answer_sd > 0:  # drawn only when asked for, so other simulations keep their bytes
        score += answer_effects(c, rng, n)[:, None, :]
    quarters = None
    if c.bradley_terry:
        tenths, quarters = verdicts(plan.quality, candidates, lengths, slot, c.slot_logit, c.length_logit, c.tie_band,
                                    c.strong_band, rng, c.davidson_tie)
    else:
        tenths = _verdicts(c, score) if c.pairwise else _on_scale(c, score)
    constant = _make_constant(c, rng, tenths) if c.constant_share > 0 else []
    anomalies = _plant_anomalies(c, rng, session_ids, tenths) if c.anomaly_rate > 0 else {}

    # llm-council enumerates a reviewer's answers in `position` order; old schemas ranked them.
    if c.positions_are_rankings:
        columns = np.argsort(-tenths * k + slot, axis=-1)  # best first, ties in display order
    else:  # one call after the other, each in display order
        columns = np.argsort(slot + call * k, axis=-1, kind="stable")
    tenths = np.take_along_axis(tenths, columns, axis=-1)
    if quarters is not None:
        quarters = np.take_along_axis(quarters, columns, axis=-1)
    if c.unscored_rate > 0:
        tenths[rng.random((n, r, k)) < c.unscored_rate] = 0
    models = np.take_along_axis(np.broadcast_to(candidates[:, None, :], (n, r, k)), columns, axis=-1)
    written = None  # drawn only when asked for, so other simulations keep their bytes
    if plan.scoring_share is not None:
        written = rng.random((n, r, k)) < plan.scoring_share[np.arange(r)[None, :, None], models]
    if c.humans or c.gold is not None:
        rated = np.broadcast_to(reference_raters(c, plan, rng, n)[:, :, None], (n, r, k))
        written = rated if written is None else written & rated
    if c.late_reviewers:  # a reviewer that joins late scores nothing before
        joins = np.array([c.late_reviewers.get(reviewer, 0.0) for reviewer in c.reviewer_ids])
        joined = np.broadcast_to((t[:, None] >= joins[None, :])[:, :, None], (n, r, k))
        written = joined if written is None else written & joined
    return Chunk(session_ids, timestamps, metadata, lengths, columns, models, tenths, anomalies, written,
                 [session_ids[s] for s in constant], quarters)


def _on_scale(c: SimulationConfig, score: np.ndarray) -> np.ndarray:
    """Scores in tenths of a point, rounded to the scale's step (0.1, or 1 with integer_scale)
    and clipped to 1..10."""
    if c.integer_scale:
        return np.clip(np.rint(score), MIN_TENTHS // 10, MAX_TENTHS // 10).astype(np.int64) * 10
    return np.clip(np.rint(score * 10), MIN_TENTHS, MAX_TENTHS).astype(np.int64)


def _verdicts(c: SimulationConfig, score: np.ndarray) -> np.ndarray:
    """Pairwise verdicts in tenths: each call's two answers (columns 2i and 2i + 1, before
    the lines are put in display order) judged against each other, as a pairwise judge
    does: 10 (1.0) for the higher score, 0 for the other, 5 each when they differ by less
    than the tie margin. A reviewer's offset moves both alike and so never shows."""
    gap = score[..., 0::2] - score[..., 1::2]
    first = np.where(gap > c.tie_margin, 10, np.where(gap < -c.tie_margin, 0, 5))
    tenths = np.empty(score.shape, dtype=np.int64)
    tenths[..., 0::2], tenths[..., 1::2] = first, 10 - first
    return tenths


def _make_constant(c: SimulationConfig, rng: np.random.Generator, tenths: np.ndarray) -> list[int]:
    """In a random share of sessions each reviewer gives every answer one score: its own mean
    over the session's answers, on the scale's step. Its level (and drift) stays; only the
    differences between answers vanish, as when a judge finds every answer equally good."""
    hit = np.flatnonzero(rng.random(tenths.shape[0]) < c.constant_share)
    step = 10 if c.integer_scale else 1
    # halves up, not numpy's halves to even: to even would move each reviewer's level by its
    # parity (a level near an odd score up, near an even one down) and bias its severity
    level = np.floor(tenths[hit].mean(axis=-1, keepdims=True) / step + 0.5).astype(np.int64) * step
    tenths[hit] = np.broadcast_to(level, tenths[hit].shape)
    return hit.tolist()


def _per_slot(effects: dict[str, list[float]], reviewers: list[str], k: int) -> np.ndarray:
    """(R, K): each reviewer's values per display slot, 0 past those given."""
    return np.array([(list(effects.get(r, [])) + [0.0] * k)[:k] for r in reviewers], dtype=np.float64)


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
    """Timestamps spread evenly with jitter over (start, end], in session order, and t in [0, 1].

    With batch_size > 1, each batch of consecutive sessions shares one time, the middle of its
    share of the span, as a judge run stamps every judgment of its batch alike. The jitter is
    drawn all the same, so every other draw matches the unbatched simulation."""
    total_us = round(c.days * 86_400_000_000)
    index = np.arange(first, first + n)
    jitter = rng.random(n)
    if c.batch_size == 1:
        fraction = (index + 1 - jitter) / c.sessions
    else:
        fraction = (index // c.batch_size + 0.5) / -(-c.sessions // c.batch_size)
    offsets_us = np.rint(fraction * total_us).astype(np.int64)
    if c.straggler_days > 0:  # the last session comes well after the rest, as a rerun of one judgment
        offsets_us[index == c.sessions - 1] = total_us + round(c.straggler_days * 86_400_000_000)
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
