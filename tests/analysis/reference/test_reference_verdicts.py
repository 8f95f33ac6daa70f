"""Verdicts on pairs of answers: one net verdict per reviewer over both orders, ties within the
tolerance, every pair of a pointwise session, and the reference raters' strict majority."""

from __future__ import annotations

import numpy as np
import pytest

from council_db.analysis.loading.score_data import from_rows
from council_db.analysis.reference.items import session_items
from council_db.analysis.reference.verdicts import answers, majority, pairs


def rows(session: str, reviewer: str, scores: dict[str, list[float]], slots: list[int] | None = None) -> list[tuple]:
    """Records of one reviewer in one session: each candidate's scores in the order given."""
    out = []
    for k, (model, values) in enumerate(scores.items()):
        for call, value in enumerate(values):
            slot = (k + call) % 2 if slots is None else slots[k]
            out.append((session, 1_000 * int(session[1:]), reviewer, model, slot, 100 + k, value))
    return out


def verdicts_of(records: list[tuple], tie_tolerance: float = 0.0):
    data = from_rows(sorted(records, key=lambda r: r[0]))
    found = pairs(answers(data), tie_tolerance)
    return data, found


def test_a_judge_that_saw_both_orders_gives_one_net_verdict():
    records = (rows("s1", "judge", {"a": [1.0, 0.5], "b": [0.0, 0.5]})  # a wins, then a tie: net a
               + rows("s2", "judge", {"a": [1.0, 0.0], "b": [0.0, 1.0]})  # first-shown wins twice: net tie
               + rows("s3", "judge", {"a": [0.0, 0.0], "b": [1.0, 1.0]}))  # b both times
    data, found = verdicts_of(records)
    assert found.two_candidates.all() and found.verdicts[:, data.reviewers.index("judge")].tolist() == [1, 0, -1]


def test_differences_within_the_tie_tolerance_are_ties():
    records = rows("s1", "judge", {"a": [7.2], "b": [7.0]}) + rows("s2", "judge", {"a": [7.0], "b": [8.0]})
    assert verdicts_of(records)[1].verdicts[:, 0].tolist() == [1, -1]
    assert verdicts_of(records, tie_tolerance=0.5)[1].verdicts[:, 0].tolist() == [0, -1]
    with pytest.raises(ValueError, match="tie tolerance"):
        verdicts_of(records, tie_tolerance=-1)


def test_a_pointwise_session_gives_every_pair_of_its_answers_the_first_named_first():
    records = rows("s1", "judge", {"c": [3.0], "a": [9.0], "b": [5.0]}, slots=[0, 1, 2])
    data, found = verdicts_of(records)
    pairs_named = [(data.models[answers(data).model[i]], data.models[answers(data).model[j]])
                   for i, j in zip(found.first, found.second)]
    assert pairs_named == [("a", "b"), ("a", "c"), ("b", "c")]
    assert found.verdicts[:, 0].tolist() == [1, 1, 1] and not found.two_candidates.any()


def test_the_reference_verdict_is_a_strict_majority_and_splits_are_counted():
    records = []
    votes = {"s1": [1, 1, -1], "s2": [1, -1], "s3": [0], "s4": [1, 0, -1, 1]}
    for session, session_votes in votes.items():
        for h, vote in enumerate(session_votes):
            records += rows(session, f"h{h}", {"a": [1.0 if vote > 0 else 0.5 if vote == 0 else 0.0],
                                               "b": [0.0 if vote > 0 else 0.5 if vote == 0 else 1.0]})
    data, found = verdicts_of(records)
    humans = np.array([data.reviewers.index(f"h{h}") for h in range(4)])
    reference = majority(found, humans)
    assert reference.verdict[0] == 1.0 and reference.verdict[2] == 0.0  # 2 of 3; a lone rater's own verdict
    assert np.isnan(reference.verdict[1]) and np.isnan(reference.verdict[3])  # 1 of 2, 2 of 4: no strict majority
    assert reference.no_majority == 2 and reference.counts.tolist()[0] == [1, 0, 2]


def test_sessions_showing_one_items_candidates_are_one_item_and_a_councils_are_not():
    records = (rows("s1", "j", {"q1/out1": [1.0], "q1/out2": [0.0]}) + rows("s2", "j", {"q1/out1": [1.0],
                                                                                       "q1/out2": [0.0]})
               + rows("s3", "j", {"q2/out1": [1.0], "q2/out2": [0.0]}))
    assert session_items(from_rows(records)).tolist() == [0, 0, 1]
    council = [r for s in range(1, 20) for r in rows(f"s{s}", "j", {"gpt": [1.0], "claude": [0.0]})]
    assert session_items(from_rows(council)).tolist() == list(range(19))
    one_item = rows("s1", "j", {"q1/out1": [1.0], "q1/out2": [0.0]}) + rows("s2", "j", {"q1/out1": [0.0],
                                                                                       "q1/out2": [1.0]})
    assert session_items(from_rows(one_item)).tolist() == [0, 1]  # one set alone: no sign of per-item names
