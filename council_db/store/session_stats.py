"""Per-session sufficient statistics of sessions that a batch of the importer created.

The same numbers as sql/session_stats.sql (the definition, and what any other session
gets), computed with numpy from the rows the importer holds in memory: reading them back
with SQL would cost a third of the import's time. A test checks the two agree. Sessions
whose records changed otherwise are recomputed by that SQL (``refresh``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from council_db.contract.score_batch import OUT_OF_SCALE, UNSCORED, ScoreColumns
from council_db.integer_keys import sort_order
from council_db.resources import read_sql
from council_db.store.id_runs import id_runs

if TYPE_CHECKING:
    from sqlalchemy import Connection

COLUMNS = ("session_id", "scale_id", "records", "usable", "unscored", "out_of_scale", "known_lengths", "score_sum",
           "score_sq_sum",
           "length_sum", "length_sq_sum", "length_score_sum", "answers", "answer_sxx", "answer_syy", "answer_sxy",
           "answer_z")


def refresh(connection: Connection, session_ids: set[int]) -> None:
    """Recompute these sessions' statistics from their scores, in the caller's write
    transaction (a session's records can arrive in several batches or imports, or go with an
    import, and an answer's mean score is not additive). Ids come in runs (new sessions get
    consecutive ids), so each run is one range query."""
    from council_db.store.named_sql import run

    for first, last in id_runs(session_ids):
        bounds = {"first": first, "last": last}
        run(connection, "DELETE FROM session_stats WHERE session_id BETWEEN :first AND :last", bounds)
        run(connection, f"INSERT INTO session_stats ({', '.join(COLUMNS)}) " + read_sql("session_stats"), bounds)


def groups(*keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group number of each row (groups numbered in key order) and the first row of each
    group; rows group together when every key is equal. Needs at least one row."""
    order = sort_order(*keys)
    new = np.zeros(len(order), dtype=bool)
    new[0] = True
    for key in keys:
        ordered = key[order]
        new[1:] |= ordered[1:] != ordered[:-1]
    group = np.empty(len(order), dtype=np.int64)
    group[order] = np.cumsum(new) - 1
    return group, order[new]


def stats_columns(columns: ScoreColumns) -> list[np.ndarray]:
    """session_stats columns (COLUMNS order) for a batch's score rows; answer_z is NaN where unusable."""
    session, model, scale, score = columns.session_id, columns.model_id, columns.scale_id, columns.score
    length, own, reason = columns.length.astype(np.float64), columns.self_review, columns.exclusion
    usable = reason == 0
    sized = usable & (columns.length >= 0)  # an unknown length (fields.UNKNOWN_LENGTH) is in no length sum

    group, first = groups(session, scale)
    n = len(first)

    def total(weights: np.ndarray | None = None, keep: np.ndarray | None = None) -> np.ndarray:
        g = group if keep is None else group[keep]
        w = None if weights is None else (weights if keep is None else weights[keep])
        return np.bincount(g, weights=w, minlength=n)

    rated = sized & ~own
    answers, sxx, syy, sxy = _answer_moments(group[rated], model[rated], columns.length[rated], score[rated], n)
    counts = [session[first], scale[first], total(), total(keep=usable), total(keep=reason == UNSCORED),
              total(keep=reason == OUT_OF_SCALE), total(keep=sized)]
    sums = [total(score, sized), total(score * score, sized), total(length, sized),
            total(length * length, sized), total(length * score, sized)]
    return [*(column.astype(np.int64) for column in counts), *sums, answers.astype(np.int64), sxx, syy, sxy,
            _fisher_z(answers, sxx, syy, sxy)]


def _fisher_z(n: np.ndarray, sxx: np.ndarray, syy: np.ndarray, sxy: np.ndarray) -> np.ndarray:
    """atanh of each session's answer-level r where the meta-analysis can use it, else NaN."""
    scale = np.sqrt(sxx * syy)
    usable = (n >= 4) & (sxx > 0) & (syy > 0) & (np.abs(sxy) < scale)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(usable, np.arctanh(sxy / np.where(usable, scale, 1.0)), np.nan)


def _answer_moments(group: np.ndarray, model: np.ndarray, length: np.ndarray, score: np.ndarray,
                    n: int) -> list[np.ndarray]:
    """Per group: answer count and centred sums over answers of x = ln(chars + 1) and
    y = the answer's mean score (an answer is a (model, length) pair in its session;
    ``length`` in characters, an integer)."""
    if len(group) == 0:
        return [np.zeros(n, dtype=np.int64), np.zeros(n), np.zeros(n), np.zeros(n)]
    answer, first = groups(group, model, length)
    y = np.bincount(answer, weights=score) / np.bincount(answer)
    x = np.log(length[first] + 1.0)
    owner = group[first]
    count = np.bincount(owner, minlength=n)
    safe = np.maximum(count, 1)
    dx = x - (np.bincount(owner, weights=x, minlength=n) / safe)[owner]
    dy = y - (np.bincount(owner, weights=y, minlength=n) / safe)[owner]
    return [count, np.bincount(owner, weights=dx * dx, minlength=n), np.bincount(owner, weights=dy * dy, minlength=n),
            np.bincount(owner, weights=dx * dy, minlength=n)]
