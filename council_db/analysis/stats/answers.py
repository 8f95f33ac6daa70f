"""One row per candidate answer: the unit ADR-015 correlates (an answer's length with its
average score) and the unit reviewers agree or disagree about."""

from __future__ import annotations

import msgspec
import numpy as np

from council_db.analysis.stats.unique_rows import distinct


class AnswerTable(msgspec.Struct, frozen=True):
    """Candidate answers, ordered by (session, model, log_length).

    ``n_sessions`` is the session count of the data the table came from (sessions are
    numbered 0..n_sessions-1); a session can have no rows if none of its scores was usable.
    """

    session: np.ndarray  # int64
    model: np.ndarray  # int64 index into the window's model names
    log_length: np.ndarray  # float64 log(chars + 1)
    length: np.ndarray  # float64 chars, exp(log_length) - 1
    mean_score: np.ndarray  # float64 mean over the answer's reviewers
    n_scores: np.ndarray  # int64 scores averaged
    n_sessions: int

    def __len__(self) -> int:
        return len(self.session)


def answer_index(session: np.ndarray, model: np.ndarray, log_length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Number the distinct answers and say which answer each record is about.

    Records carry no answer label, and one model can answer twice in a session under two
    labels, so the key is (session, model, log_length): two labels of one model are told
    apart by their lengths (identical lengths merge, which cannot be helped; so do unknown
    ones, NaN). Returns (answer number per record, first record of each answer); answers are
    numbered in (session, model, log_length) order.
    """
    n = len(session)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    log_length = np.where(np.isnan(log_length), -1.0, log_length)  # NaN != NaN: one unknown length
    order = np.lexsort((log_length, model, session))
    s, m, length = session[order], model[order], log_length[order]
    new = np.ones(n, dtype=bool)
    new[1:] = (s[1:] != s[:-1]) | (m[1:] != m[:-1]) | (length[1:] != length[:-1])
    answer = np.empty(n, dtype=np.int64)
    answer[order] = np.cumsum(new) - 1
    return answer, order[new]


def tabulate_answers(session: np.ndarray, model: np.ndarray, log_length: np.ndarray, score: np.ndarray,
                     n_sessions: int) -> AnswerTable:
    """Each answer's length and mean score over the records given (one record per score)."""
    answer, first = answer_index(session, model, log_length)
    n_scores = np.bincount(answer, minlength=len(first))
    totals = np.bincount(answer, weights=score, minlength=len(first))
    log_len = log_length[first]
    return AnswerTable(
        session=session[first].astype(np.int64), model=model[first].astype(np.int64), log_length=log_len,
        length=np.expm1(log_len), mean_score=totals / np.maximum(n_scores, 1), n_scores=n_scores.astype(np.int64),
        n_sessions=n_sessions,
    )


def within_session_pairs(answer_session: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (i < j) of answers in one session, given each answer's session in sorted
    order (as ``answer_index`` numbers them): the answers a pairwise comparison can form."""
    _, starts, sizes = np.unique(answer_session, return_index=True, return_counts=True)
    first, second = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for k in distinct(sizes[sizes >= 2]).tolist():
        at = starts[sizes == k]
        i, j = np.triu_indices(k, 1)
        first.append((at[:, None] + i[None, :]).ravel())
        second.append((at[:, None] + j[None, :]).ravel())
    return np.concatenate(first), np.concatenate(second)
