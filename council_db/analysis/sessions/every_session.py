"""The anomaly tests' sums for every session of a window, in one streamed pass over its records.

Above the sample size the joint model is fitted on the window's sample (its records fit in
memory), but the anomaly tests need only per (session, reviewer) sums, and those can be had for
every session: the window's records are read in session order a chunk of whole sessions at a
time, from their packed strings where the store keeps them (store/packed_records.py, revision
0020, `db pack`: a row a session, not a row a record), else from the score rows; each
record's residual is its score less the fit's reviewer, candidate, slot, self-review and
length terms (its reviewer's own length slope, the panel's for one without), less its
session's mean of that (the session effect absorbed, as the fit absorbs it by demeaning; log
lengths centred within the session over the known ones, as the fit centres them), and each
chunk's sessions are reduced to their cells (session_cells.py) while a thread reads the next
two (store/read_ahead.py). Memory holds the cells, never the window's records.

Doing the arithmetic in SQL instead (the effects as CASE expressions, grouped by session and
reviewer) costs about as much CPU as reading the score rows, and fetching its cells more
(docs/benchmarks.md, "Every session screened"); here the fit's own numpy arithmetic gives the
residuals.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from council_db.analysis.joint.joint_model import JointFit, centred_where_known, rounding_noise_removed
from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.loading.window import Window
from council_db.analysis.sessions.session_cells import Cells, Tally, resolution, reviewer_type, sums_of
from council_db.store.database import Database
from council_db.store.packed_records import Columns, columns_of, from_packed, from_scores
from council_db.store.packing import is_on
from council_db.store.read_ahead import ReadAhead

LENGTH_TERM = "length effect"  # one not identified is taken as zero by the fit too: nothing to subtract
IN_WINDOW = "session_id IN (SELECT id FROM ({window}) AS report_window)"


def why_not(window: Window, fit: JointFit) -> str | None:
    """Why the sums cannot be had in one pass (None: they can): the sample then serves alone."""
    if window.reviewers or window.models or window.dimension or window.as_of:
        return "--reviewer, --model, --dimension and --as-of windows are read from their records"
    if fit.fixed_totals is not None:
        return "designs that fix each reviewer's totals are fitted per (session, reviewer)"
    if len(fit.groups) > 1:
        return "the reviewers and candidates fall apart into groups"
    if [name for name in fit.not_identified if not name.startswith(LENGTH_TERM)] or fit.n_records == 0:
        return "the joint model leaves effects unidentified"
    return None


class _Terms:
    """The fit's terms, looked up by stored id (NaN for a level the fit never saw)."""

    def __init__(self, fit: JointFit, ids: dict[str, int], judge_of: dict[int, int], reviewers: list[str]):
        size = max(ids.values(), default=0) + 1

        def by_id(values: dict[str, float]) -> np.ndarray:
            out = np.full(size, np.nan)
            out[[ids[name] for name in values]] = list(values.values())
            return out

        self.severity = by_id({name: e.estimate for name, e in fit.severity.items()})
        self.quality = by_id({name: e.estimate for name, e in fit.quality.items()})
        self.own = np.nan_to_num(by_id({name: e.estimate for name, e in fit.self_preference_by_reviewer.items()}))
        self.judge_of = np.arange(size)
        self.judge_of[list(judge_of)] = list(judge_of.values())
        slots = {-1: 0.0, **{slot: e.estimate for slot, e in fit.slot_effects.items()}}
        self.slot_offset = -min(slots)
        self.slots = np.full(max(slots) + self.slot_offset + 1, np.nan)
        self.slots[[s + self.slot_offset for s in slots]] = list(slots.values())
        common = fit.length_per_log.estimate if fit.length_per_log is not None else 0.0
        own_slope = by_id({name: e.estimate for name, e in fit.length_by_reviewer.items()})
        self.length = np.where(np.isnan(own_slope), common, own_slope)  # the panel's where it has none
        self.reviewer_index = np.full(size, -1)
        self.reviewer_index[[ids[name] for name in reviewers]] = np.arange(len(reviewers))

    def fitted(self, rec: Columns) -> np.ndarray | None:
        """Each record's fitted value less its session's effect and the length term (NaN: a
        reviewer or candidate the fit never saw; None: a display slot it never saw)."""
        slot = rec["slot"] + self.slot_offset
        if slot.min() < 0 or slot.max() >= len(self.slots):
            return None
        reviewer, model = rec["reviewer"], rec["model"]
        own = self.judge_of[reviewer] == model
        return self.severity[reviewer] + self.quality[model] + self.slots[slot] + self.own[reviewer] * own


def every_session(db: Database, window: Window, data: ScoreData, fit: JointFit, *, packed: bool | None = None) \
        -> Cells | None:
    """The cells of every session of ``window``, with residuals from ``fit`` (fitted on
    ``data``, the window or its sample); None when ``why_not`` says no or a record has a
    reviewer, candidate or slot the fit never saw. ``packed`` None: from the packed strings
    where the store keeps them (store/packing.py), else from ``scores`` row by row; True or
    False: that way (the tests and benchmarks/bench_every_session.py compare the two)."""
    if why_not(window, fit) is not None:
        return None
    if packed is None:
        packed = is_on(db)
    with db.reading() as reader:
        ids = {name: number for number, name in reader.rows("SELECT id, name FROM models")}
        judge_of = dict(reader.rows("SELECT id, COALESCE(model_of, id) FROM models"))
        references = [number for number, in reader.rows("SELECT id FROM models WHERE reviewer_kind <> 'judge'")]
        scale = reader.rows("SELECT id FROM scales WHERE name = :name", {"name": data.scale})
        if not scale or any(name not in ids for name in data.reviewers):
            return None
        sessions_sql, params = window.session_query()
        in_window = reader.scalar(f"SELECT COUNT(*) FROM ({sessions_sql}) AS w", params)
        if in_window == reader.scalar("SELECT COUNT(*) FROM sessions"):  # every session: no look-up each
            sessions_sql, params = "", {}
        in_sessions = IN_WINDOW.format(window=sessions_sql) if sessions_sql else "1 = 1"
        chunks = (from_packed(reader, in_sessions, params, scale[0][0]) if packed
                  else map(columns_of, from_scores(reader, in_sessions, params, scale[0][0])))
        collected = _Collected(in_window, _Terms(fit, ids, judge_of, data.reviewers), data)
        # the next chunks read, and their sessions' bounds found, while this one is reduced
        with ReadAhead(_prepared(rec, references) for rec in chunks) as ahead:
            return collected.read(iter(ahead))


def _prepared(rec: Columns, references: list[int]) -> Columns:
    """A chunk's records but those of the ``references`` (human raters and gold labels), with
    each record's session within the chunk (``in_chunk``) and each session's first record
    (``first``): made on the reader's thread, which then has about as much to do as the main
    one (the log lengths' centring too made it the slower, 0.27-0.31 s against 0.14-0.16 at 100k)."""
    if references:
        kept = ~np.isin(rec["reviewer"], references)
        rec = {name: column[kept] for name, column in rec.items()}
    session = rec["session"]
    new = np.empty(len(session), dtype=bool)  # a session's first record
    new[:1] = True
    np.not_equal(session[1:], session[:-1], out=new[1:])
    return {**rec, "in_chunk": np.cumsum(new) - 1, "first": np.flatnonzero(new)}


class _Collected:
    """The window's cells, filled a chunk of whole sessions at a time: the per-session arrays
    made once for the window's sessions, the cells' grown as they come (by half again, sized
    from the cells a session the first chunk had: a council of one shape is never copied)."""

    def __init__(self, sessions: int, terms: _Terms, data: ScoreData):
        self.terms, self.data, self.filled, self.cells = terms, data, 0, 0
        self.present = np.zeros(sessions, dtype=np.int32)
        self.within, self.low, self.high = np.zeros(sessions), np.zeros(sessions), np.zeros(sessions)
        self.session_ids = np.zeros(sessions, dtype=np.int64)
        self.per_cell = {"reviewer": np.zeros(0, dtype=reviewer_type(len(data.reviewers))),
                         "count": np.zeros(0, dtype=np.uint16),  # widened by _append if a cell holds more
                         "residual_count": np.zeros(0, dtype=np.uint16), "residual_square": np.zeros(0)}
        self.tally = Tally(np.zeros(0), np.zeros(0))
        self.scores = [np.unique(data.score)]  # the values seen: the sample's, and each cell's lowest and highest

    def read(self, chunks: Iterator[Columns]) -> Cells | None:
        """The cells of the chunks' records (whole sessions a chunk, ``_prepared``)."""
        for rec in chunks:
            if not self._add(rec):
                return None
        n, kept = self.filled, {name: values[:self.cells] for name, values in self.per_cell.items()}
        return Cells(present=self.present[:n], **kept, within=self.within[:n], low=self.low[:n], high=self.high[:n],
                     constant_share=self.tally.share(), step=self._step(), reviewers=list(self.data.reviewers),
                     session_ids=self.session_ids[:n])

    def _add(self, rec: Columns) -> bool:
        """Reduce whole sessions' records to their cells; False if a record's level is unseen."""
        if not len(rec["session"]):
            return True
        terms = self.terms
        reviewer = terms.reviewer_index[rec["reviewer"]]
        fitted = terms.fitted(rec)
        if fitted is None or (reviewer < 0).any() or np.isnan(fitted).any():
            return False
        starts, session = rec["first"], rec["in_chunk"]
        score = rec["score"]
        residual, used = self._residuals(rec, session, len(starts), score - fitted)
        sums = sums_of(session, reviewer, score, (len(starts), len(self.data.reviewers)))
        at = slice(self.filled, self.filled + len(starts))
        self.present[at], self.within[at], self.low[at], self.high[at] = sums.present, sums.within, sums.low, sums.high
        self.session_ids[at] = rec["session"][starts]
        cell_used = np.repeat(used, sums.present)
        self._append(len(starts), reviewer=sums.reviewer, count=sums.count,
                     residual_count=np.where(cell_used, sums.count, 0),
                     residual_square=np.where(cell_used, sums.summed(residual ** 2), 0.0))
        self.tally += sums.tally
        self.scores.append(np.unique(np.concatenate([sums.cell_low, sums.cell_high])))
        self.filled += len(starts)
        return True

    def _append(self, sessions: int, **cells: np.ndarray) -> None:
        """Add a chunk's cells (of ``sessions`` sessions), growing the arrays where they are full:
        to the window's sessions at the cells a session seen so far, or by half again."""
        end = self.cells + len(cells["count"])
        if end > len(self.per_cell["count"]):
            size = max(-(-end * len(self.present) // (self.filled + sessions)), end + end // 2)
            for name, values in self.per_cell.items():
                grown = np.zeros(size, dtype=values.dtype)
                grown[:self.cells] = values[:self.cells]
                self.per_cell[name] = grown
        for name, values in cells.items():
            kept = self.per_cell[name]
            if kept.dtype.kind == "u" and len(values) and values.max() > np.iinfo(kept.dtype).max:
                self.per_cell[name] = kept = kept.astype(np.int64)  # a cell of more scores than its type holds
            kept[self.cells:end] = values
        self.cells = end

    def _step(self) -> float:
        """The scale's step as the scores seen show it (an empty cell's extremes are infinite)."""
        values = np.concatenate(self.scores)
        return resolution(values[np.isfinite(values)])

    def _residuals(self, rec: Columns, session: np.ndarray, g: int, less_fitted: np.ndarray) \
            -> tuple[np.ndarray, np.ndarray]:
        """Per record: the residual (0 in a session of one record, which the fit leaves out: its
        own mean taken from it); per session: whether it was used (two or more records)."""
        known = rec["length"] >= 0
        log_len = np.log1p(np.where(known, rec["length"], 0).astype(float))
        centred = centred_where_known(log_len, known, session)  # as the fit centres them
        r = less_fitted - self.terms.length[rec["reviewer"]] * centred
        count = np.bincount(session, minlength=g)
        residual = r - (np.bincount(session, weights=r, minlength=g) / count)[session]
        return rounding_noise_removed(residual, self.data.score), count >= 2
