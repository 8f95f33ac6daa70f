"""The report's first-shown and length odds (``slot_odds``): the same point estimates as the
leaderboard's fit, and a cluster-robust SE that agrees with the one-step session bootstrap's
(both estimate one sampling variance; the sandwich without resampling)."""

from __future__ import annotations

import numpy as np
from msgspec.structs import replace

from council_db.analysis.pairwise.games import keep_games
from council_db.analysis.pairwise.ranking import bradley_terry_ranking
from council_db.analysis.pairwise.slot_odds import slot_odds
from tests.analysis.pairwise.test_recovery import _simulated


def test_the_sandwich_se_matches_the_session_bootstrap_and_the_estimates_match_the_leaderboard_fit():
    games, _ = _simulated(7, 400, slot_logit=0.3, length_logit=1.0, tie_band=0.5)
    found = slot_odds(games)
    board = bradley_terry_ranking(games, style=("length",), n_boot=2000, seed=7)
    pairs = [(found.first_shown[0], board.slot[0]), (found.length, board.style[0])]
    for odds, coefficient in pairs:
        assert odds.estimate.estimate == np.float64(coefficient.estimate.estimate)
        assert abs(odds.estimate.se / coefficient.estimate.se - 1) < 0.1, (odds.name, odds.estimate.se,
                                                                           coefficient.estimate.se)
    assert found.first_shown[0].games == found.n_games == len(games) and found.first_shown[0].judge == "judge"


def test_games_of_unknown_length_are_left_out_and_counted_in_a_warning():
    games, _ = _simulated(3, 60, slot_logit=0.3)
    unknown = games.length_diff.copy()
    unknown[:10] = np.nan
    found = slot_odds(replace(games, length_diff=unknown))
    assert found.n_games == len(games) - 10
    assert found.warnings == [f"10 of {len(games):,} games left out: their answers' length is unknown"]


def test_no_game_with_a_known_display_order_gives_no_odds():
    games, _ = _simulated(3, 40)
    assert slot_odds(keep_games(games, np.zeros(len(games), dtype=bool) | ~games.slot_known)) is None
