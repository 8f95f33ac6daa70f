"""Games from stored records: one per (session, reviewer, display order), the outcome for the
answer shown first, both orders of one prompt in one cluster."""

from __future__ import annotations

import numpy as np

from council_db.analysis.loading.score_data import from_rows
from council_db.analysis.pairwise.games import games_of
from council_db.analysis.pairwise.ranking import bradley_terry_ranking


def _swap_session(key: str, judge: str, a: str, b: str, g1: tuple[float, float], g2: tuple[float, float],
                  lengths: tuple[int, int] = (100, 300)) -> list[tuple]:
    """A fastchat-pair line: game 1 shows a first, game 2 shows b first; g1, g2 are (a's, b's) scores."""
    return [(key, 1, judge, a, 0, lengths[0], g1[0]), (key, 1, judge, b, 1, lengths[1], g1[1]),
            (key, 1, judge, b, 0, lengths[1], g2[1]), (key, 1, judge, a, 1, lengths[0], g2[0])]


def test_a_swap_session_gives_one_game_per_order_with_the_first_shown_answers_outcome():
    rows = _swap_session("q1", "judge", "alpha", "beta", (1.0, 0.0), (0.5, 0.5))
    found = games_of(from_rows(rows, scale="0-1"))
    assert len(found) == 2 and found.unpaired == 0
    firsts = [found.models[m] for m in found.first]
    assert sorted(zip(firsts, found.outcome.tolist())) == [("alpha", 1.0), ("beta", 0.5)]
    assert found.slot_known.all() and (found.session == 0).all()


def test_the_length_difference_is_arenas_normalised_ratio_for_the_answer_shown_first():
    rows = _swap_session("q1", "judge", "alpha", "beta", (0.0, 1.0), (0.0, 1.0), lengths=(100, 300))
    found = games_of(from_rows(rows, scale="0-1"))
    by_first = dict(zip((found.models[m] for m in found.first), found.length_diff.tolist()))
    assert np.isclose(by_first["alpha"], (100 - 300) / 400) and np.isclose(by_first["beta"], 0.5)
    assert found.length_unit == "characters"


def test_a_game_whose_other_order_had_no_verdict_is_kept_alone():
    rows = _swap_session("q1", "judge", "alpha", "beta", (1.0, 0.0), (0.0, 1.0))[2:]  # game 1 errored
    found = games_of(from_rows(rows, scale="0-1"))
    assert len(found) == 1 and found.models[found.first[0]] == "beta" and found.outcome[0] == 1.0


def test_unknown_slots_pair_records_in_stored_order_and_say_the_slot_is_unknown():
    rows = [("q1", 1, "judge", "alpha", -1, 10, 0.25), ("q1", 1, "judge", "beta", -1, 20, 0.75)]
    found = games_of(from_rows(rows, scale="0-1"))
    assert len(found) == 1 and not found.slot_known[0]
    assert found.models[found.first[0]] == "alpha" and found.outcome[0] == 0.25


def test_pointwise_sessions_of_three_answers_give_each_pair_its_comparison():
    rows = [("q1", 1, "judge", m, slot, 10, score) for slot, (m, score) in enumerate(
        [("alpha", 7.0), ("beta", 7.0), ("gamma", 9.0)])]
    found = games_of(from_rows(rows, scale="1-10"))
    outcomes = {(found.models[a], found.models[b]): y for a, b, y in zip(found.first, found.second, found.outcome)}
    assert outcomes == {("alpha", "beta"): 0.5, ("alpha", "gamma"): 0.0, ("beta", "gamma"): 0.0}


def test_markdown_differences_come_from_the_style_counts_and_tokens_replace_characters():
    rows = _swap_session("q1", "judge", "alpha", "beta", (1.0, 0.0), (1.0, 0.0))
    data = from_rows(rows, scale="0-1")
    style = np.array([[50, 2, 0, 1], [150, 0, 4, 1], [150, 0, 4, 1], [50, 2, 0, 1]], dtype=np.float64)
    data.style = style  # ScoreData's per-answer style (tokens, headers, list items, bold spans)
    found = games_of(data)
    first_alpha = [found.models[m] == "alpha" for m in found.first].index(True)
    assert found.length_unit == "tokens" and np.isclose(found.length_diff[first_alpha], -0.5)
    assert np.allclose(found.markdown_diff[first_alpha], [2 / 3, -4 / 5, 0.0])



def test_a_record_without_its_partner_is_counted_and_said():
    rows = _swap_session("q1", "judge", "alpha", "beta", (1.0, 0.0), (0.0, 1.0)) + \
        _swap_session("q2", "judge", "alpha", "beta", (0.5, 0.5), (1.0, 0.0))[:3]
    found = games_of(from_rows(rows, scale="0-1"))
    assert len(found) == 3 and found.unpaired == 1
    assert "1 records of two-answer sessions left out" in bradley_terry_ranking(found, n_boot=50).warnings[0]
