"""Games: one verdict of one reviewer on two answers, as the pairwise model reads it.

A session of two answers is one prompt; a reviewer judging it in both display orders gives two
games (the formats council-db reads put both orders of one prompt in ONE session, so the
session is the cluster every interval resamples). Records are paired into games per (session,
reviewer): the k-th record of the answer numbered lower with the k-th of the other, taking the
lower answer's records by ascending slot and the other's by descending slot, so game 1 of a
swap design (A at 0, B at 1) and game 2 (B at 0, A at 1) pair up; with unknown slots, in the
order they were stored. A session of k > 2 answers scored pointwise gives one game per
reviewer and pair of answers, its outcome from which scored higher (equal: a tie).

Each game carries the outcome for the answer shown first (1 won, 0.5 tie, 0 lost, or a
verdict strength between), whether the display slot is known (if not, "first" is only the
answer numbered lower and the slot term leaves the game out), and the two answers' style:
Arena's normalised length difference (len_a - len_b) / (len_a + len_b), on the answers'
tokens where the data carries a token count for every answer, else on their characters; and
markdown differences (a - b) / (a + b + 1) of headers, list items and bold spans (Chiang et
al. 2024's style control), NaN where unknown.
"""

from __future__ import annotations

import msgspec
import numpy as np
from msgspec.structs import replace

from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.stats.answers import answer_index, within_session_pairs

PAIRWISE_SCALE = "0-1"  # win 1, tie 0.5, loss 0 (and verdict strengths between)
ROUNDING = 1e-9
MARKDOWN = ("headers", "list items", "bold spans")  # ScoreData.style's columns 1..3 (column 0: tokens)


class Games(msgspec.Struct, frozen=True):
    session: np.ndarray  # (G,) int64: the cluster, the session number
    reviewer: np.ndarray  # (G,) int64 index into ``reviewers``
    first: np.ndarray  # (G,) int64 model index of the answer shown first (lower-numbered when unknown)
    second: np.ndarray  # (G,) int64 model index of the other answer
    outcome: np.ndarray  # (G,) float64 in [0, 1]: the first answer's result
    slot_known: np.ndarray  # (G,) bool: the first answer was shown first
    length_diff: np.ndarray  # (G,) float64 normalised length difference, NaN unknown
    chars: np.ndarray  # (G, 2) float64 the first and second answers' characters, NaN unknown
    markdown_diff: np.ndarray | None  # (G, 3) float64 markdown differences, NaN unknown; None: no counts
    length_unit: str  # "tokens" or "characters"
    models: list[str]
    reviewers: list[str]
    n_sessions: int
    unpaired: int  # records of two-answer sessions with no record of the other answer to pair with
    judge_models: dict[str, str] = msgspec.field(default_factory=dict)  # ScoreData.judge_models: a reviewer's model

    def __len__(self) -> int:
        return len(self.session)


def games_of(data: ScoreData) -> Games:
    """Every game in ``data``: two-answer sessions as paired records, larger ones as pairs."""
    answer, first_record = answer_index(data.session, data.model, data.log_length)
    answers_in = np.bincount(data.session[first_record], minlength=data.n_sessions)
    two = answers_in[data.session] == 2
    paired_a, paired_b, unpaired = _paired_records(data, answer, first_record, two)
    many_a, many_b, many_outcome = _pointwise_pairs(data, answer, first_record, ~two & (answers_in[data.session] > 2))
    a = np.concatenate([paired_a, many_a])
    b = np.concatenate([paired_b, many_b])
    outcome = np.concatenate([_outcome(data, paired_a, paired_b), many_outcome])
    known = (data.slot[a] >= 0) & (data.slot[b] >= 0) & (data.slot[a] != data.slot[b])
    swap = known & (data.slot[b] < data.slot[a])
    a, b = np.where(swap, b, a), np.where(swap, a, b)
    outcome = np.where(swap, 1.0 - outcome, outcome)
    order = np.argsort(data.session[a], kind="stable")
    a, b, outcome, known = a[order], b[order], outcome[order], known[order]
    length_diff, unit = _length_diff(data, a, b)
    return Games(session=data.session[a], reviewer=data.reviewer[a], first=data.model[a], second=data.model[b],
                 outcome=outcome, slot_known=known, length_diff=length_diff,
                 chars=np.stack([np.expm1(data.log_length[a]), np.expm1(data.log_length[b])], axis=1),
                 markdown_diff=_markdown_diff(data, a, b),
                 length_unit=unit, models=list(data.models), reviewers=list(data.reviewers),
                 n_sessions=data.n_sessions, unpaired=unpaired,
                 judge_models={name: identity.model for name, identity in data.identities.items()})


def keep_games(games: Games, keep: np.ndarray) -> Games:
    """Only the games where ``keep`` (one bool per game)."""
    return replace(games, session=games.session[keep], reviewer=games.reviewer[keep], first=games.first[keep],
                   second=games.second[keep], outcome=games.outcome[keep], slot_known=games.slot_known[keep],
                   length_diff=games.length_diff[keep], chars=games.chars[keep],
                   markdown_diff=None if games.markdown_diff is None else games.markdown_diff[keep])


def without_self_judgments(games: Games) -> Games:
    """The games whose reviewer is neither candidate: a judge's verdict on its own answer is
    data about self-preference, not about the answers."""
    judges = [games.judge_models.get(name, name) for name in games.reviewers]
    reviewer_model = np.array([games.models.index(name) if name in games.models else -1 for name in judges],
                              dtype=np.int64)
    own = reviewer_model[games.reviewer]
    return keep_games(games, (own != games.first) & (own != games.second))


def _paired_records(data: ScoreData, answer: np.ndarray, first_record: np.ndarray,
                    two: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(record of the lower answer, record of the other) per game of the two-answer sessions,
    and how many of their records found no partner."""
    records = np.flatnonzero(two)
    answer_session = data.session[first_record]  # answers are numbered in session order
    starts = _starts(answer_session)
    lowest = np.full(data.n_sessions, -1, dtype=np.int64)
    lowest[answer_session[starts]] = starts
    side = (answer[records] != lowest[data.session[records]]).astype(np.int64)  # 0: the lower answer
    slot = data.slot[records]
    order = np.lexsort((records, np.where(side == 0, slot, -slot), side, data.reviewer[records],
                        data.session[records]))
    records, side = records[order], side[order]
    group = np.stack([data.session[records], data.reviewer[records], side])
    new = np.ones(len(records), dtype=bool)
    new[1:] = (group[:, 1:] != group[:, :-1]).any(axis=0)
    starts = np.flatnonzero(new)
    occurrence = np.arange(len(records)) - np.repeat(starts, np.diff(np.append(starts, len(records))))
    order = np.lexsort((side, occurrence, data.reviewer[records], data.session[records]))
    records, side, occurrence = records[order], side[order], occurrence[order]
    match = (side[:-1] == 0) & (side[1:] == 1) & (occurrence[:-1] == occurrence[1:]) \
        & (data.session[records[:-1]] == data.session[records[1:]]) \
        & (data.reviewer[records[:-1]] == data.reviewer[records[1:]])
    at = np.flatnonzero(match)
    return records[at], records[at + 1], int(len(records) - 2 * len(at))


def _starts(sorted_values: np.ndarray) -> np.ndarray:
    """Where each run of equal values begins in a sorted array."""
    if len(sorted_values) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate([[True], sorted_values[1:] != sorted_values[:-1]]))


def _outcome(data: ScoreData, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The first record's result: its own score where the two are a verdict on the 0-1 scale
    (they sum to 1), else 1, 0.5 or 0 as it scored higher, the same or lower."""
    sa, sb = data.score[a], data.score[b]
    compared = np.where(np.abs(sa - sb) <= ROUNDING, 0.5, (sa > sb).astype(np.float64))
    if data.scale != PAIRWISE_SCALE:
        return compared
    return np.where(np.abs(sa + sb - 1.0) <= ROUNDING, sa, compared)


def _pointwise_pairs(data: ScoreData, answer: np.ndarray, first_record: np.ndarray,
                     many: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per reviewer and pair of answers of the sessions of more than two answers: a record of
    each answer (the reviewer's first) and the outcome of their mean scores."""
    empty = np.zeros(0, dtype=np.int64)
    if not many.any():
        return empty, empty, np.zeros(0)
    n_answers, n_reviewers = len(first_record), len(data.reviewers)
    cell = answer[many] * n_reviewers + data.reviewer[many]
    totals = np.bincount(cell, weights=data.score[many], minlength=n_answers * n_reviewers)
    counts = np.bincount(cell, minlength=n_answers * n_reviewers)
    record = np.full(n_answers * n_reviewers, -1, dtype=np.int64)
    record[cell[::-1]] = np.flatnonzero(many)[::-1]  # the first record of each cell
    first, second = within_session_pairs(data.session[first_record])
    cells_a = (first[:, None] * n_reviewers + np.arange(n_reviewers)).ravel()
    cells_b = (second[:, None] * n_reviewers + np.arange(n_reviewers)).ravel()
    both = (counts[cells_a] > 0) & (counts[cells_b] > 0)
    cells_a, cells_b = cells_a[both], cells_b[both]
    mean_a, mean_b = totals[cells_a] / counts[cells_a], totals[cells_b] / counts[cells_b]
    outcome = np.where(np.abs(mean_a - mean_b) <= ROUNDING, 0.5, (mean_a > mean_b).astype(np.float64))
    return record[cells_a], record[cells_b], outcome


def _length_diff(data: ScoreData, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, str]:
    """Arena's (len_a - len_b) / (len_a + len_b), on tokens when every game's answers have a
    token count, else on characters; NaN where a length is unknown."""
    style = getattr(data, "style", None)
    if style is not None and len(a) and np.isfinite(style[a, 0]).all() and np.isfinite(style[b, 0]).all():
        len_a, len_b, unit = style[a, 0], style[b, 0], "tokens"
    else:
        len_a, len_b, unit = np.expm1(data.log_length[a]), np.expm1(data.log_length[b]), "characters"
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = (len_a - len_b) / (len_a + len_b)
    diff[(len_a + len_b) == 0] = 0.0  # two empty answers: no difference
    return diff, unit

def _markdown_diff(data: ScoreData, a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """(a - b) / (a + b + 1) per markdown count, NaN where unknown; None without counts."""
    style = getattr(data, "style", None)
    if style is None:
        return None
    counts_a, counts_b = style[a, 1:4], style[b, 1:4]
    return (counts_a - counts_b) / (counts_a + counts_b + 1.0)
