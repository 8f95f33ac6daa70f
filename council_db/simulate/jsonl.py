"""Writing the simulated sessions as llm-council JSONL, byte for byte, and the truth dict
(every planted parameter) that tests and benchmarks check recoveries against."""

from __future__ import annotations

import io
import json
from typing import Any, BinaryIO, TextIO

import numpy as np

from council_db.simulate.bradley_terry import QUARTERS
from council_db.simulate.config import (
    CATEGORIES,
    MAX_TENTHS,
    RECORDS_PER_CHUNK,
    TOKEN_BUCKETS,
    SimulationConfig,
)
from council_db.simulate.dimensions import dimension_rng, dimension_tenths
from council_db.simulate.sessions import Chunk, Plan, build_plan, simulate_chunk


class _LineFormatter:
    """Builds JSONL text from string tables, so no record goes through json.dumps.

    Each line is six pieces: session head, reviewer+model, position, length, score, tail.
    The pieces are gathered with numpy object indexing and joined once per chunk.
    The text equals json.dumps(dataclasses.asdict(record)) for llm-council's BiasRecord; a human's
    or gold reviewer's lines add "reviewer_kind" after "reviewer_id", and with a rubric's
    dimensions a scored line ends with "score_dimensions" (a seventh piece).
    """

    def __init__(self, c: SimulationConfig) -> None:
        self.head = (
            '{"schema_version": ' + json.dumps(c.schema_version) + ', "session_id": "%s", '
            '"timestamp": "%s", "consent_level": ' + str(int(c.consent_level)) + ', "reviewer_id": '
        )
        kinds = {rv: f', "reviewer_kind": "{kind}"' for rv, kind in c.reviewer_kinds.items()}
        self.pairs = np.array(
            [
                [f'{json.dumps(rv)}{kinds.get(rv, "")}, "model_id": {json.dumps(md)}, "position": ' for md in c.models]
                for rv in c.reviewer_ids
            ],
            dtype=object,
        )
        self.positions = np.array(
            [f'{p % c.answers_per_session if c.swap_orders else p}, "response_length_chars": '
             for p in range(c.lines_per_reviewer)],
            dtype=object
        )
        self.scores = np.array([f"{t // 10}.{t % 10}" for t in range(MAX_TENTHS + 1)], dtype=object)
        self.quarters = np.array(QUARTERS, dtype=object)
        self.tails = np.array(
            [
                f', "score_scale": "{c.scale}", "council_config_version": '
                f'{json.dumps(c.council_config_version)}, "query_hash": null, "query_metadata": '
                + json.dumps({"category": cat, "token_bucket": bucket, "language": "en"})
                + "}\n"
                for cat in CATEGORIES
                for bucket in TOKEN_BUCKETS
            ],
            dtype=object,
        )
        # a rubric's dimensions: the tail leaves the line open for them (simulate/dimensions.py)
        self.named = [(', "score_dimensions": {' if number == 0 else ", ") + json.dumps(name) + ": "
                      for number, name in enumerate(c.dimensions)]
        if self.named:
            self.tails = np.array([tail[:-2] for tail in self.tails.tolist()], dtype=object)

    def _dimensions(self, tenths: np.ndarray, named: np.ndarray) -> np.ndarray:
        """Per line, the end of its text: its named scores (none where unscored), closed."""
        text = np.full(tenths.shape, "", dtype=object)
        for number, prefix in enumerate(self.named):
            text = text + prefix + self.scores[named[..., number]]
        return np.where(tenths > 0, text + "}}\n", "}\n")

    def format(self, chunk: Chunk, named: np.ndarray | None = None) -> str:
        n, r, k = chunk.tenths.shape
        heads = np.array(
            [self.head % pair for pair in zip(chunk.session_ids, chunk.timestamps)], dtype=object
        )
        lengths = np.array(
            [f'{length}, "score_value": ' for length in chunk.lengths.ravel().tolist()], dtype=object
        )
        pieces = np.empty((n, r, k, 6 if named is None else 7), dtype=object)
        pieces[..., 0] = heads[:, None, None]
        pieces[..., 1] = self.pairs[np.arange(r)[None, :, None], chunk.models]
        pieces[..., 2] = self.positions
        pieces[..., 3] = lengths[np.arange(n)[:, None, None] * k + chunk.columns]
        pieces[..., 4] = self.scores[chunk.tenths] if chunk.quarters is None else self.quarters[chunk.quarters]
        pieces[..., 5] = self.tails[chunk.metadata][:, None, None]
        if named is not None:
            pieces[..., 6] = self._dimensions(chunk.tenths, named)
        if chunk.written is not None:
            pieces[~chunk.written] = ""
        return "".join(pieces.ravel().tolist())


def write_jsonl(config: SimulationConfig, out: BinaryIO | TextIO) -> dict[str, Any]:
    """Write the simulated records to `out` (text or binary stream); return the truth dict.

    Sessions are simulated and written in chunks, so memory stays flat for any size.
    """
    rng = np.random.default_rng(config.seed)
    plan = build_plan(config, rng)
    formatter = _LineFormatter(config)
    named_rng = dimension_rng(config) if config.dimensions else None
    text_mode = isinstance(out, io.TextIOBase)
    per_session = len(plan.offsets) * config.lines_per_reviewer
    chunk_sessions = max(1, RECORDS_PER_CHUNK // per_session)
    anomalies: dict[str, dict[str, Any]] = {}
    constant: list[str] = []
    records = 0
    for first in range(0, config.sessions, chunk_sessions):
        n = min(chunk_sessions, config.sessions - first)
        chunk = simulate_chunk(config, plan, rng, first, n)
        named = None if named_rng is None else dimension_tenths(config, named_rng, chunk.tenths)
        text = formatter.format(chunk, named)
        out.write(text if text_mode else text.encode())  # type: ignore[arg-type]
        anomalies.update(chunk.anomalies)
        constant += chunk.constant_sessions
        records += n * per_session if chunk.written is None else int(chunk.written.sum())
    return _truth(config, plan, records, anomalies, constant)


def _truth(
    c: SimulationConfig, plan: Plan, records: int, anomalies: dict[str, dict[str, Any]], constant: list[str]
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
        "reviewer_position_effects": dict(zip(reviewers, plan.reviewer_position.tolist())),
        "swap_orders": c.swap_orders,
        "repeats": c.repeats,
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
        **({"position_drift": dict(zip(reviewers, plan.position_drift.tolist()))} if c.position_drift else {}),
        "anomaly_rate": c.anomaly_rate,
        "anomalous_sessions": anomalies,
        "unscored_rate": c.unscored_rate,
        "batch_size": c.batch_size,
        "integer_scale": c.integer_scale,
        "constant_share": c.constant_share,
        "constant_sessions": constant,
        "reviewer_kinds": c.reviewer_kinds,
        "humans": list(c.humans),
        "humans_per_session": c.humans_per_session,
        "gold": c.gold,
        "reference_share": c.reference_share,
        "answer_sd": c.answer_sd,
        "reviewer_noise_sd": dict(zip(reviewers, plan.noise_sd.tolist())),
        "reviewer_verbosity": dict(zip(reviewers, plan.verbosity.tolist())),
        "scale": c.scale,
        "pairwise": c.pairwise,
        "tie_margin": c.tie_margin,
        "straggler_days": c.straggler_days,
        "late_reviewers": dict(c.late_reviewers),
        "dimensions": list(c.dimensions),
        "dimension_sd": c.dimension_sd,
        "dimension_position_effects": {name: list(c.dimension_position_effects.get(name, []))
                                       for name in c.dimensions},
        "dimension_reviewer_offsets": {name: dict(c.dimension_reviewer_offsets.get(name, {})) for name in c.dimensions},
        **({"bradley_terry": {"strengths": dict(zip(c.models, plan.quality.tolist())), "slot_logit": c.slot_logit,
                              "length_logit": c.length_logit, "tie_band": c.tie_band, "strong_band": c.strong_band,
                              "davidson_tie": c.davidson_tie}}
           if c.bradley_terry else {}),
    }
