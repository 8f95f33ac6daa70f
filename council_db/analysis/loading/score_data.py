"""The records an analysis works on, as numpy arrays: one entry per usable score.

Usable means: in the window, on the analysis scale, and not excluded (out of scale or
unscored). Sessions are numbered 0..S-1 in time order, so arrays can be grouped by
session cheaply (``np.bincount``, ``np.add.reduceat``) and resampled by session.
"""

from __future__ import annotations

import math
from typing import Iterable

import msgspec
import numpy as np
from msgspec.structs import replace

from council_db.contract.fields import DEFAULT_SCALE, STYLE_FIELDS, UNKNOWN_LENGTH
from council_db.contract.reviewer_identity import Identity


class ScoreData(msgspec.Struct):
    session: np.ndarray  # int64, 0..n_sessions-1, sessions in time order
    reviewer: np.ndarray  # int64 index into ``reviewers``
    model: np.ndarray  # int64 index into ``models`` (the candidate)
    slot: np.ndarray  # int64 display slot, -1 where position is not a display slot (schema < 1.2.0)
    log_length: np.ndarray  # float64 log(response_length_chars + 1); NaN where the length is unknown
    score: np.ndarray  # float64, score points on ``scale``
    self_review: np.ndarray  # bool, the reviewer's model == the candidate
    reviewers: list[str]
    models: list[str]
    session_keys: list[str]
    session_ts_us: np.ndarray  # int64 per session; -1 when the session has no timestamp
    scale: str = DEFAULT_SCALE
    excluded: dict[str, int] = msgspec.field(default_factory=dict)  # records left out, by reason
    kinds: dict[str, str] = msgspec.field(default_factory=dict)  # reviewer -> "human" or "gold"; the others are judges
    # reviewer -> its identity, for a reviewer with provenance (contract/reviewer_identity); the
    # others are their model: self-preference matches a judge to its own answers by the model
    identities: dict[str, Identity] = msgspec.field(default_factory=dict)
    # (n_records, 4) float64: the answer's tokens, markdown headers, list items and bold spans
    # (fields.STYLE_FIELDS), NaN unknown; None when no record has any (no cost without style)
    style: np.ndarray | None = None

    @property
    def n_sessions(self) -> int:
        return len(self.session_keys)

    def judge_model(self, reviewer: str) -> str:
        """The model a reviewer is (its identity's model where a log gave its provenance)."""
        identity = self.identities.get(reviewer)
        return reviewer if identity is None else identity.model

    @property
    def n_records(self) -> int:
        return len(self.score)


def _codes(values: tuple[str, ...]) -> tuple[list[str], np.ndarray]:
    """Sorted distinct names and each value's index among them (a dict lookup per value:
    several times faster than np.unique on an object array)."""
    names = sorted(set(values))
    index = {name: number for number, name in enumerate(names)}
    return names, np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))


def from_rows(rows: Iterable[tuple], scale: str = DEFAULT_SCALE, excluded: dict[str, int] | None = None,
              style: np.ndarray | None = None) -> ScoreData:
    """ScoreData from (session_key, ts_us or None, reviewer, model, slot or -1, length, score,
    ...) rows, which must come grouped by session in time order; later columns are ignored.
    ``style``: the rows' (n, 4) style array (ScoreData.style), kept only if it knows any."""
    columns = list(zip(*rows)) or [()] * 7
    keys, times, reviewer_names, model_names, slots, lengths, scores = columns[:7]
    starts = [0] + [i for i in range(1, len(keys)) if keys[i] != keys[i - 1]]
    session = np.zeros(len(keys), dtype=np.int64)
    if len(starts) > 1:
        session[starts[1:]] = 1
        session = np.cumsum(session)
    reviewers, reviewer = _codes(reviewer_names)
    models, model = _codes(model_names)
    return ScoreData(
        session=session, reviewer=reviewer, model=model,
        slot=np.array(slots, dtype=np.int64),
        log_length=log_lengths(np.array(lengths, dtype=np.float64)),
        score=np.array(scores, dtype=np.float64),
        self_review=np.array(reviewer_names, dtype=object) == np.array(model_names, dtype=object),
        reviewers=reviewers, models=models,
        session_keys=[keys[i] for i in starts] if keys else [],
        session_ts_us=np.array([-1 if times[i] is None else times[i] for i in starts] if keys else [],
                               dtype=np.int64),
        scale=scale, excluded=dict(excluded or {}), style=known_style(style),
    )


def from_records(records: Iterable[dict]) -> ScoreData:
    """ScoreData straight from llm-council record dicts (the simulator's output), for tests
    and benchmarks that skip the database. Applies the same rules as the database path:
    records whose position is not a display slot (or none) get slot -1; unscored/out-of-scale records
    are left out and counted."""
    from council_db.contract.fields import EXCLUSION_REASONS
    from council_db.contract.scales import score_scale
    from council_db.contract.schema_versions import schema_version
    from council_db.contract.timestamps import timestamp_us

    reason_codes = {number: code for code, (number, _) in EXCLUSION_REASONS.items()}

    by_session: dict[str, list[dict]] = {}
    for record in records:
        by_session.setdefault(record["session_id"], []).append(record)
    ordered = sorted(by_session.items(), key=lambda item: timestamp_us(item[1][0].get("timestamp")) or 0)
    rows, styles, excluded = [], [], {}
    for key, session_records in ordered:
        for record in session_records:
            scale = score_scale(record.get("score_scale", DEFAULT_SCALE))
            exclusion = scale.exclusion(record["score_value"])
            if exclusion is not None:
                reason = reason_codes[exclusion]
                excluded[reason] = excluded.get(reason, 0) + 1
                continue
            position = record.get("position")
            display = position is not None and schema_version(record.get("schema_version")).display_order
            rows.append((key, timestamp_us(record.get("timestamp")), record["reviewer_id"], record["model_id"],
                         position if display else -1, _length(record["response_length_chars"]),
                         float(record["score_value"])))
            styles.append([record.get(name) for name in STYLE_FIELDS])
    style = np.array(styles, dtype=np.float64).reshape(-1, len(STYLE_FIELDS))  # None -> NaN
    return from_rows(rows, excluded=excluded, style=style)


def _length(chars: int | None) -> int:
    return UNKNOWN_LENGTH if chars is None else chars


def keep_records(data: ScoreData, keep: np.ndarray) -> ScoreData:
    """Only the records where ``keep`` (one bool per record) is true; sessions keep their
    numbers, so a session can be left with no record."""
    if keep.all():
        return data
    return replace(data, session=data.session[keep], reviewer=data.reviewer[keep], model=data.model[keep],
                   slot=data.slot[keep], log_length=data.log_length[keep], score=data.score[keep],
                   self_review=data.self_review[keep], style=_style_rows(data, keep))


def keep_sessions(data: ScoreData, keep: np.ndarray) -> ScoreData:
    """Only the sessions where ``keep`` (one bool per session) is true, renumbered in time order."""
    rows = keep[data.session]
    number = np.cumsum(keep) - 1
    return replace(
        data, session=number[data.session[rows]].astype(np.int64), reviewer=data.reviewer[rows],
        model=data.model[rows], slot=data.slot[rows], log_length=data.log_length[rows], score=data.score[rows],
        self_review=data.self_review[rows], session_keys=[k for k, on in zip(data.session_keys, keep) if on],
        session_ts_us=data.session_ts_us[keep], excluded=dict(data.excluded),
        style=_style_rows(data, rows),
    )


def judges_only(data: ScoreData) -> ScoreData:
    """Only the judges' records, and only the sessions a judge scored: human raters' and gold
    labels' scores are the reference a judge is measured against, not judgments to audit, so
    no judge analysis (severity, position, length, trends, ...) may see them."""
    if not data.kinds:
        return data
    judge = np.array([name not in data.kinds for name in data.reviewers], dtype=bool)
    if judge.all():
        return data
    kept = keep_records(data, judge[data.reviewer])
    code = np.cumsum(judge) - 1
    kept = replace(kept, reviewer=code[kept.reviewer].astype(np.int64),
                   reviewers=[name for name, on in zip(data.reviewers, judge) if on])
    scored = np.zeros(data.n_sessions, dtype=bool)
    scored[kept.session] = True
    return kept if scored.all() else keep_sessions(kept, scored)


def _style_rows(data: ScoreData, rows: np.ndarray) -> np.ndarray | None:
    return None if data.style is None else known_style(data.style[rows])


def known_style(style: np.ndarray | None) -> np.ndarray | None:
    """The style array as ScoreData keeps it: None when it knows nothing (no record's style)."""
    if style is None or np.isnan(style).all():
        return None
    return style


def log_lengths(chars: np.ndarray) -> np.ndarray:
    """log(chars + 1), NaN where the length is unknown (stored as fields.UNKNOWN_LENGTH, -1):
    a length figure that forgets to leave those out then says NaN instead of a wrong number."""
    out = np.full(len(chars), np.nan)
    known = chars >= 0
    out[known] = np.log1p(chars[known])
    return out


def known_lengths(data: ScoreData) -> np.ndarray:
    """Per record: whether its answer's length is known."""
    return ~np.isnan(data.log_length)


def log_length_sd(data: ScoreData) -> float:
    """SD of log length over the records whose length is known: the unit 'per SD of log
    length' is reported in."""
    sized = data.log_length[known_lengths(data)]
    return float(np.std(sized, ddof=1)) if len(sized) > 1 else math.nan
