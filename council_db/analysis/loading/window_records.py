"""A window's records, read from the database straight into numpy, and made ``ScoreData``.

The query (sql/report_records.sql) gives ids, not names: a row of eight integers and two
floats goes from the database cursor into a structured array without ever being a Python
row, and the few names (models, scales, exclusion reasons, session keys) are looked up once.
Joining the names into every row and converting them in Python took 2.5 times as long (70
and 25 ms against 40 ms for a 2,000-session window): a third of a report on a small history.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
import numpy as np

from council_db.analysis.loading.dimension_scores import (
    WITHOUT,
    WITHOUT_ID,
    UnknownDimension,
    score_sql,
    window_dimensions,
)
from council_db.analysis.loading.score_data import ScoreData, known_style, log_lengths
from council_db.analysis.stats.unique_rows import distinct
from council_db.contract.fields import DEFAULT_SCALE, STYLE_FIELDS
from council_db.contract.reviewer_identity import Identity
from council_db.contract.timestamps import MAX_US, MIN_US
from council_db.integer_keys import sort_order
from council_db.resources import read_sql
from council_db.store.database import Database
from council_db.store.reading import Reader
from council_db.store.sql_filters import record_filters

# The columns of sql/report_records.sql. -1 is "none": no exclusion, no readable time, no
# display slot.
RECORD = np.dtype([("session_id", "i8"), ("ts_us", "i8"), ("reviewer_id", "i8"), ("model_id", "i8"),
                   ("slot", "i8"), ("length", "f8"), ("score", "f8"), ("scale_id", "i8"), ("exclusion_id", "i8")])
# Where answers have a style: the records with their position too, which completes their key.
# Read only then: at 320,000 records the column cost 2.5 MB and 1.52 against 1.40 CPU seconds,
# which a window of llm-council's data (no style) does not pay.
STYLED_RECORD = np.dtype(RECORD.descr + [("position", "i8")])
KEY = ["session_id", "reviewer_id", "model_id", "position"]  # a record's, and its style's (answer_styles)
STYLE = np.dtype([(name, "i8") for name in KEY] + [(name, "f8") for name in STYLE_FIELDS])  # NULL -> NaN
ANY_STYLE = "SELECT COUNT(*) FROM (SELECT 1 FROM answer_styles LIMIT 1) AS one"
WINDOW_STYLES = (f"SELECT {', '.join(f'st.{name}' for name in STYLE.names)} "
                 "FROM report_window AS w JOIN answer_styles AS st ON st.session_id = w.id")


REFERENCE_KINDS = "SELECT name, reviewer_kind FROM models WHERE reviewer_kind <> 'judge' ORDER BY name"
# Reviewers with provenance (revision 0016): id, their model's id and name, prompt, temperature, seed
IDENTITIES = ("SELECT r.id, r.model_of, m.name, r.prompt, r.temperature, r.seed FROM models AS r "
              "JOIN models AS m ON m.id = r.model_of")


class Records(msgspec.Struct, frozen=True):
    """The window's records as stored (ids), with the names of what they refer to."""

    rows: np.ndarray  # RECORD (STYLED_RECORD where answers have a style), grouped by session in time order
    models: dict[int, str]
    scales: dict[int, str]
    reasons: dict[int, str]
    session_keys: dict[int, str]
    kinds: dict[str, str]  # reviewer name -> "human" or "gold" (revision 0012); the others are judges
    identities: dict[int, tuple[int, Identity]]  # a reviewer with provenance's id -> its model's id, its identity
    style: np.ndarray | None = None  # per row: ScoreData.style's columns; None when no row has a style


def fetch_records(db: Database, sessions_sql: str, params: dict[str, Any], *, reviewers: list[str] = (),
                  models: list[str] = (), min_consent: int = 1, dimension: str | None = None,
                  imported_by: datetime | None = None) -> Records:
    """The records of the sessions ``sessions_sql`` selects whose own consent level is at least
    ``min_consent`` (of these reviewers and candidates, when named), in one read transaction;
    with ``dimension``, that rubric dimension's scores in place of the overall ones
    (analysis/loading/dimension_scores.py); with ``imported_by`` (--as-of), only the records
    imports started by then stored."""
    window = f"WITH report_window AS ({sessions_sql}) "
    filters = dict(record_filters(reviewers, models, imported_by), min_consent=min_consent, min_us=MIN_US,
                   max_us=MAX_US)
    with db.reading() as reader:
        styled = bool(reader.scalar(ANY_STYLE))
        scored, chosen = score_sql(reader, dimension, window, params)
        records_sql = read_sql("report_records").format(style_key=", sc.position" if styled else "", **scored)
        rows = reader.array(window + records_sql, STYLED_RECORD if styled else RECORD, {**params, **filters, **chosen})
        if dimension is not None and len(rows) and (rows["exclusion_id"] == WITHOUT_ID).all():
            raise UnknownDimension(dimension, window_dimensions(reader, window, params))
        keys = window + "SELECT s.id, s.session_key FROM report_window AS w JOIN sessions AS s ON s.id = w.id"
        styles = reader.array(window + WINDOW_STYLES, STYLE, params) if styled else None
        return Records(rows=rows, models=_names(reader, "SELECT id, name FROM models"),
                       scales=_names(reader, "SELECT id, name FROM scales"),
                       reasons={**_names(reader, "SELECT id, code FROM exclusion_reasons"), WITHOUT_ID: WITHOUT},
                       session_keys=_names(reader, keys, params), kinds=reference_kinds(reader),
                       identities={int(number): (int(model), Identity(*provenance))
                                   for number, model, *provenance in reader.rows(IDENTITIES)},
                       style=None if styles is None else aligned_styles(rows, styles))


def aligned_styles(rows: np.ndarray, styles: np.ndarray) -> np.ndarray | None:
    """Per row of ``rows`` (STYLED_RECORD), its style from ``styles`` (STYLE rows, any order), NaN
    where it has none; None when none has one. Both sets of keys sorted together (numeric
    columns: np.unique on the records' void keys took 5-7 times as long), no Python per row."""
    if not len(styles):
        return None
    keys = [np.concatenate([rows[name], styles[name]]) for name in KEY]
    order = sort_order(*keys)
    starts = np.zeros(len(order), dtype=bool)
    starts[0] = True
    for key in keys:
        ordered = key[order]
        starts[1:] |= ordered[1:] != ordered[:-1]
    group = np.empty(len(order), dtype=np.int64)
    group[order] = np.cumsum(starts) - 1
    found = np.full((int(group.max()) + 1, len(STYLE_FIELDS)), np.nan)
    found[group[len(rows):]] = np.column_stack([styles[name] for name in STYLE_FIELDS])
    return known_style(found[group[:len(rows)]])


def reference_kinds(reader: Reader) -> dict[str, str]:
    """The reviewers that are no judge, with their kind: a few rows of the small models table."""
    return dict(reader.rows(REFERENCE_KINDS))


def _names(reader: Reader, sql: str, params: dict[str, Any] | None = None) -> dict[int, str]:
    return {int(number): name for number, name in reader.rows(sql, params)}


def score_data(records: Records, scale: str | None = None) -> ScoreData:
    """Usable scores on ``scale`` (default: the scale most of them are on, the first seen
    among equals); the rest counted by reason."""
    rows = records.rows
    usable = rows["exclusion_id"] < 0
    excluded = _counts(rows["exclusion_id"][~usable], records.reasons)
    scale_id = _main_scale(rows["scale_id"][usable]) if scale is None else _id_of(scale, records.scales)
    others = usable & (rows["scale_id"] != scale_id)
    if others.any():
        excluded.update(_counts(rows["scale_id"][others], records.scales, prefix="other_scale:"))
    kept = usable & ~others
    style = None if records.style is None else records.style[kept]
    return _score_data(rows[kept], style, records, records.scales.get(scale_id, scale or DEFAULT_SCALE), excluded)


def _score_data(rows: np.ndarray, style: np.ndarray | None, records: Records, scale: str,
                excluded: dict[str, int]) -> ScoreData:
    sessions = rows["session_id"]
    starts = np.flatnonzero(np.r_[True, sessions[1:] != sessions[:-1]]) if len(rows) else np.zeros(0, np.int64)
    session = np.zeros(len(rows), dtype=np.int64)
    session[starts[1:]] = 1
    session = np.cumsum(session)
    reviewers, reviewer = _codes(rows["reviewer_id"], records.models)
    present = set(reviewers)
    models, model = _codes(rows["model_id"], records.models)
    # Within a session, by reviewer and candidate name (codes are name ranks), then position
    # as the query gave them: an order the records fix, whatever ids the store gave the names.
    order = sort_order(session, reviewer, model)
    rows, session, reviewer, model = rows[order], session[order], reviewer[order], model[order]
    return ScoreData(
        session=session, reviewer=reviewer, model=model, slot=rows["slot"].copy(),
        log_length=log_lengths(rows["length"]), score=rows["score"].copy(),
        self_review=_judge_ids(rows["reviewer_id"], records.identities) == rows["model_id"],  # one table, both roles
        reviewers=reviewers, models=models,
        session_keys=[records.session_keys[int(i)] for i in sessions[starts]],
        session_ts_us=rows["ts_us"][starts].copy(), scale=scale, excluded=excluded,
        kinds={name: kind for name, kind in records.kinds.items() if name in present},
        identities={records.models[number]: identity for number, (_, identity) in records.identities.items()
                    if records.models[number] in present},
        style=None if style is None else known_style(style[order]),
    )


def _judge_ids(reviewer_ids: np.ndarray, identities: dict[int, tuple[int, Identity]]) -> np.ndarray:
    """Per record: its reviewer's model's id (the reviewer's own where it has no provenance)."""
    if not identities:
        return reviewer_ids
    lookup = np.arange(max(int(reviewer_ids.max(initial=0)), *identities) + 1, dtype=np.int64)
    lookup[list(identities)] = [model for model, _ in identities.values()]
    return lookup[reviewer_ids]


def _codes(ids: np.ndarray, names: dict[int, str]) -> tuple[list[str], np.ndarray]:
    """The sorted distinct names of ``ids`` and each id's index among them."""
    found = distinct(ids)
    named = sorted((names[int(i)], int(i)) for i in found)
    index = np.zeros(int(found.max()) + 1 if len(found) else 0, dtype=np.int64)
    index[[i for _, i in named]] = np.arange(len(named))
    return [name for name, _ in named], index[ids]


def _main_scale(scale_ids: np.ndarray) -> int:
    """The scale id most records are on; among equals, the one seen first (-1: no records)."""
    if not len(scale_ids):
        return -1
    distinct, first, counts = np.unique(scale_ids, return_index=True, return_counts=True)
    tied = counts == counts.max()
    return int(distinct[tied][np.argmin(first[tied])])


def _id_of(name: str, names: dict[int, str]) -> int:
    return next((number for number, known in names.items() if known == name), -1)


def _counts(ids: np.ndarray, names: dict[int, str], prefix: str = "") -> dict[str, int]:
    """Records per name, in order of first appearance."""
    distinct, first, counts = np.unique(ids, return_index=True, return_counts=True)
    order = np.argsort(first)
    return {f"{prefix}{names[int(distinct[i])]}": int(counts[i]) for i in order}
