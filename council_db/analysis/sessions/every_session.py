"""The anomaly tests' sums for every session of a window, in one streamed SQL pass.

Above the sample size the joint model is fitted on the window's sample (its records fit in
memory), but the anomaly tests need only per (session, reviewer) sums, and SQL can give those
for every session: the scores are joined to the fit's effects (written into the query as
CASE expressions: a few reviewers, candidates and slots) and grouped by (session, reviewer),
the scores' primary key order, so no sort. The rows arrive a chunk at a time, each one
finished cell: memory holds the cells, never the records.

A record's residual is its score less the fit's reviewer, candidate, slot, self-review and
length terms, less the session's mean of that (the session effect absorbed, as the fit
absorbs it by demeaning): from each cell's count, sum and sum of squares and the session's
count and sum, exactly. A session whose lengths are partly unknown is centred as the fit
centres it (unknown lengths at the session's mean known length).
"""

from __future__ import annotations

import math

import numpy as np

from council_db.analysis.joint.joint_model import ROUNDING, JointFit
from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.loading.window import Window
from council_db.analysis.sessions.session_cells import Cells, resolution
from council_db.store.database import Database

CHUNK = 200_000  # cells fetched at a time
NO_LENGTH = "length effect (no answer length is known)"  # not identified, and then nothing to subtract
CELL = np.dtype([("session", "i8"), ("reviewer", "i8"), ("count", "f8"), ("total", "f8"), ("square", "f8"),
                 ("low", "f8"), ("high", "f8"), ("fitted", "f8"), ("v", "f8"), ("vv", "f8"), ("known", "f8"),
                 ("length", "f8"), ("unknown", "f8"), ("unknown_v", "f8")])
CELLS_SQL = """WITH report_window AS ({window}), fitted AS (
    SELECT sc.session_id, sc.reviewer_id, sc.score_value AS y,
           CASE WHEN sc.response_length_chars >= 0 THEN ln(sc.response_length_chars + 1.0) END AS len,
           sc.score_value - ({reviewer}) - ({model}) - ({slot}) - ({own}) AS u
    FROM scores AS sc
    WHERE sc.session_id IN (SELECT id FROM report_window) AND sc.exclusion_id IS NULL
      AND sc.scale_id = :scale_id{judges}
), valued AS (SELECT session_id, reviewer_id, y, len, u - {length} * COALESCE(len, 0.0) AS v FROM fitted)
SELECT session_id, reviewer_id, COUNT(*), SUM(y), SUM(y * y), MIN(y), MAX(y), COUNT(v), SUM(v), SUM(v * v),
       COUNT(len), SUM(len), COUNT(*) - COUNT(len), SUM(CASE WHEN len IS NULL THEN v END)
FROM valued GROUP BY session_id, reviewer_id"""


def why_not(window: Window, fit: JointFit) -> str | None:
    """Why the sums cannot be had in one pass (None: they can): the sample then serves alone."""
    if window.reviewers or window.models or window.dimension or window.as_of:
        return "--reviewer, --model, --dimension and --as-of windows are read from their records"
    if fit.fixed_totals is not None:
        return "designs that fix each reviewer's totals are fitted per (session, reviewer)"
    if len(fit.groups) > 1:
        return "the reviewers and candidates fall apart into groups"
    if [name for name in fit.not_identified if name != NO_LENGTH] or fit.n_records == 0:
        return "the joint model leaves effects unidentified"
    return None


def every_session(db: Database, window: Window, data: ScoreData, fit: JointFit) -> Cells | None:
    """The cells of every session of ``window``, with residuals from ``fit`` (fitted on
    ``data``, the window or its sample); None when ``why_not`` says no or a record has a
    reviewer, candidate or slot the fit never saw."""
    if why_not(window, fit) is not None:
        return None
    with db.reading() as reader:
        ids = {name: number for number, name in reader.rows("SELECT id, name FROM models")}
        judge_of = dict(reader.rows("SELECT id, COALESCE(model_of, id) FROM models"))
        references = [number for number, in reader.rows("SELECT id FROM models WHERE reviewer_kind <> 'judge'")]
        scale = reader.rows("SELECT id FROM scales WHERE name = :name", {"name": data.scale})
        if not scale:
            return None
        sessions_sql, params = window.session_query()
        sql = CELLS_SQL.format(window=sessions_sql, **_terms(fit, ids, judge_of),
                               judges=f" AND sc.reviewer_id NOT IN ({', '.join(map(str, references))})"
                               if references else "")
        rows = np.concatenate([np.fromiter(map(tuple, chunk), dtype=CELL) for chunk in
                               reader.chunks(sql, {**params, "scale_id": scale[0][0]}, CHUNK)] or [np.zeros(0, CELL)])
    if (rows["fitted"] < rows["count"]).any():
        return None
    return _cells(rows, data, [ids[name] for name in data.reviewers], fit)


def _terms(fit: JointFit, ids: dict[str, int], judge_of: dict[int, int]) -> dict[str, str]:
    """The fit's terms as SQL expressions of a score row (NULL for a level the fit never saw)."""
    length = fit.length_per_log.estimate if fit.length_per_log is not None else 0.0
    self_terms = {ids[name]: effect.estimate for name, effect in fit.self_preference_by_reviewer.items()}
    return {
        "reviewer": _case("sc.reviewer_id", {ids[name]: e.estimate for name, e in fit.severity.items()}),
        "model": _case("sc.model_id", {ids[name]: e.estimate for name, e in fit.quality.items()}),
        "slot": _case("CASE WHEN sc.display_order THEN sc.position ELSE -1 END",
                      {-1: 0.0, **{slot: e.estimate for slot, e in fit.slot_effects.items()}}),
        "own": " + ".join(f"CASE WHEN sc.reviewer_id = {r} AND sc.model_id = {judge_of[r]} THEN {_number(v)} ELSE 0 END"
                          for r, v in self_terms.items()) or "0",
        "length": _number(length),
    }


def _case(column: str, values: dict[int, float]) -> str:
    whens = " ".join(f"WHEN {key} THEN {_number(value)}" for key, value in values.items())
    return f"CASE {column} {whens} END" if values else "NULL"


def _number(value: float) -> str:
    """A float as an SQL literal that reads back as the same float (repr), NULL if not finite."""
    return repr(float(value)) if math.isfinite(value) else "NULL"


def _cells(rows: np.ndarray, data: ScoreData, reviewer_ids: list[int], fit: JointFit) -> Cells:
    """Dense cells from the rows, the residual sums with the session effect taken out."""
    session_ids, session = np.unique(rows["session"], return_inverse=True)
    stored = np.asarray(reviewer_ids, dtype=np.int64)
    order = np.argsort(stored)
    reviewer = order[np.searchsorted(stored, rows["reviewer"], sorter=order)]  # every one has an effect: in data
    shape = (len(session_ids), len(reviewer_ids))

    def dense(values: np.ndarray, fill: float = 0.0) -> np.ndarray:
        out = np.full(shape, fill)
        out[session, reviewer] = values
        return out

    def per_session(values: np.ndarray) -> np.ndarray:
        return np.bincount(session, weights=values, minlength=len(session_ids))

    length = fit.length_per_log.estimate if fit.length_per_log is not None else 0.0
    known = per_session(rows["known"])
    mean_known = np.where(known > 0, per_session(np.nan_to_num(rows["length"])) / np.maximum(known, 1), 0.0)
    shift = length * mean_known[session]  # an unknown length sits at its session's mean known length
    v, unknown = np.nan_to_num(rows["v"]), rows["unknown"]
    r_sum = v - shift * unknown
    r_square = np.nan_to_num(rows["vv"]) - 2.0 * shift * np.nan_to_num(rows["unknown_v"]) + shift ** 2 * unknown
    count = per_session(rows["count"])
    used = count >= 2  # a session of one record tells the fit nothing: no residual (the fit's NaN)
    mean = per_session(r_sum) / np.maximum(count, 1)
    square = np.maximum(r_square - 2.0 * mean[session] * r_sum + rows["count"] * mean[session] ** 2, 0.0)
    spread = float(np.ptp(data.score)) if data.n_records else 0.0
    square[square <= rows["count"] * (ROUNDING * max(spread, 1.0)) ** 2] = 0.0  # the fit's rounding noise
    residual_count = np.where(used[session], rows["count"], 0.0)
    return Cells(count=dense(rows["count"]), total=dense(rows["total"]), square=dense(rows["square"]),
                 constant=dense(rows["low"] == rows["high"], False),
                 residual_count=dense(residual_count), residual_square=dense(np.where(used[session], square, 0.0)),
                 low=_per_session_extreme(np.minimum, session, rows["low"], len(session_ids), np.inf),
                 high=_per_session_extreme(np.maximum, session, rows["high"], len(session_ids), -np.inf),
                 step=resolution(np.concatenate([data.score, rows["low"], rows["high"]])),
                 reviewers=list(data.reviewers), session_ids=session_ids.astype(np.int64))


def _per_session_extreme(ufunc: np.ufunc, session: np.ndarray, values: np.ndarray, size: int, start: float) \
        -> np.ndarray:
    out = np.full(size, start)
    ufunc.at(out, session, values)
    return out
