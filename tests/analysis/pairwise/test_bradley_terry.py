"""The Bradley-Terry fit: the exact (penalised) maximum of each outcome model's likelihood,
finite under separation, and intervals that resample sessions, not games."""

from __future__ import annotations

import numpy as np
from msgspec.structs import replace
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from council_db.analysis.loading.score_data import from_rows
from council_db.analysis.pairwise.bradley_terry import RIDGE, design, fit
from council_db.analysis.pairwise.games import games_of, without_self_judgments
from council_db.analysis.pairwise.ranking import bradley_terry_ranking
from tests.analysis.pairwise.conftest import planted_games


def _centred_penalty(theta: np.ndarray, rest: np.ndarray) -> float:
    centred = theta - theta.mean()
    return 0.5 * RIDGE * (centred @ centred + rest @ rest)


def _independent_fit(games, loglik, n_extra: int) -> np.ndarray:
    """The same penalised likelihood maximised by scipy: strengths (first held at 0), slot, extras."""
    k = len(games.models)

    def negative(params):
        theta = np.concatenate([[0.0], params[:k - 1]])
        slot = params[k - 1]
        eta = theta[games.first] - theta[games.second] + slot * games.slot_known
        return -loglik(eta, games.outcome, params[k:]).sum() + _centred_penalty(theta, params[k - 1:k])

    start = np.concatenate([np.zeros(k), [0.5, 2.0][:n_extra]])
    return minimize(negative, start, method="BFGS", options={"gtol": 1e-9}).x


def _ours(games) -> np.ndarray:
    found = fit(design(games))
    assert found.converged
    return found.params


def test_ties_are_fitted_by_rao_kupper_at_the_exact_maximum():
    games = games_of(planted_games([0.0, 0.6, -0.4], 300, slot=0.3, tie=0.7, seed=1))

    def rao_kupper(eta, y, extra):
        a = extra[0]
        win, loss = expit(eta - a), expit(-eta - a)
        return np.log(np.where(y == 1.0, win, np.where(y == 0.0, loss, 1.0 - win - loss)))

    assert design(games).model.name == "rao-kupper"
    assert np.allclose(_ours(games), _independent_fit(games, rao_kupper, 1), atol=1e-4)


def test_five_verdict_levels_are_fitted_by_the_ordinal_model_at_the_exact_maximum():
    base = planted_games([0.0, 0.8, -0.5], 300, slot=0.2, tie=0.6, seed=2)
    rng = np.random.default_rng(3)
    strong = rng.random(len(base.score) // 2) < 0.5  # make half the wins and losses strong, half weak
    score = base.score.copy().reshape(-1, 2)
    decided = score[:, 0] != 0.5
    score[decided & ~strong, 0] = np.where(score[decided & ~strong, 0] == 1.0, 0.75, 0.25)
    score[:, 1] = 1.0 - score[:, 0]
    base.score = score.ravel()
    games = games_of(base)

    def ordinal(eta, y, extra):  # thresholds as log a1 and log(a2 - a1): scipy cannot leave them unordered
        a1 = np.exp(extra[0])
        a2 = a1 + np.exp(extra[1])
        cuts = np.array([-a2, -a1, a1, a2])
        level = np.rint(y * 4).astype(int)
        upper = np.append(expit(cuts[None, :] - eta[:, None]), np.ones((len(eta), 1)), axis=1)
        lower = np.insert(expit(cuts[None, :] - eta[:, None]), 0, 0.0, axis=1)
        return np.log(upper[np.arange(len(eta)), level] - lower[np.arange(len(eta)), level])

    assert design(games).model.name == "ordinal"
    theirs = _independent_fit(games, ordinal, 2)
    theirs[-2:] = np.exp(theirs[-2]), np.exp(theirs[-2]) + np.exp(theirs[-1])
    assert np.allclose(_ours(games), theirs, atol=1e-4)


def test_fractional_preferences_are_fitted_as_quasi_binomial_at_the_exact_maximum():
    base = planted_games([0.0, 0.5, -0.5], 200, slot=0.0, seed=4)
    rng = np.random.default_rng(5)
    first = np.clip(base.score.reshape(-1, 2)[:, 0] * 0.8 + rng.random(len(base.score) // 2) * 0.2, 0, 1)
    base.score = np.stack([first, 1.0 - first], axis=1).ravel()
    games = games_of(base)

    def quasi(eta, y, extra):
        return y * log_expit(eta) + (1 - y) * log_expit(-eta)

    assert design(games).model.name == "quasi-binomial"
    assert np.allclose(_ours(games), _independent_fit(games, quasi, 0), atol=1e-4)


def test_a_candidate_that_never_loses_gets_a_finite_strength_and_a_warning():
    rows = []
    for s in range(40):
        other = ["beta", "gamma"][s % 2]
        for first, second in (("alpha", other), (other, "alpha")):
            rows += [(f"s{s}", s, "judge", first, 0, 10, 1.0 if first == "alpha" else 0.0),
                     (f"s{s}", s, "judge", second, 1, 10, 1.0 if second == "alpha" else 0.0)]
        rows += [(f"t{s}", 100 + s, "judge", "beta", 0, 10, float(s % 2)),
                 (f"t{s}", 100 + s, "judge", "gamma", 1, 10, 1.0 - s % 2)]
    ranking = bradley_terry_ranking(games_of(from_rows(rows, scale="0-1")), n_boot=100)
    top = ranking.standings[0]
    assert top.model == "alpha" and top.never_lost and 3.0 < top.strength.estimate < 30.0
    assert any("never lost a game: alpha" in warning for warning in ranking.warnings)


def test_intervals_resample_sessions_so_a_prompt_judged_twice_counts_once():
    """The same games, once as one session per game and once with each prompt's two identical
    games in one session: the clustered interval is about sqrt(2) wider (arena-hard's row
    resampling would call both the same)."""
    single = planted_games([0.0, 0.5, -0.5], 400, seed=6, both_orders=False)
    rows = []
    for s in range(single.n_sessions):
        at = np.flatnonzero(single.session == s)
        for copy in range(2):
            rows += [(f"s{s:05d}", s, "judge", single.models[single.model[r]], copy if single.slot[r] == 0 else
                      1 - copy, 100, single.score[r]) for r in at]
    doubled = from_rows(rows, scale="0-1")
    separate = replace_sessions(doubled)
    width = lambda data: np.mean([s.strength.ci_high - s.strength.ci_low  # noqa: E731
                                  for s in bradley_terry_ranking(games_of(data), n_boot=400).standings])
    assert 1.2 < width(doubled) / width(separate) < 1.7


def replace_sessions(data):
    """Every game its own session: the two orders of one prompt made independent."""
    rows = []
    for s in range(data.n_sessions):
        at = np.flatnonzero(data.session == s)
        for game, pair in enumerate((at[:2], at[2:])):
            rows += [(f"s{s:05d}/{game}", 2 * s + game, "judge", data.models[data.model[r]], int(data.slot[r]), 100,
                      data.score[r]) for r in pair]
    return from_rows(rows, scale="0-1")


def test_arena_hards_strong_verdicts_count_as_three_wins_when_asked():
    """--strong-as-three: a game A>>B weighs as three A wins, A>B as one, A=B a tie: the same
    fit as the three-level model on the games with each strong one written three times."""
    base = planted_games([0.0, 0.8, -0.5], 200, slot=0.2, tie=0.6, seed=8)
    score = base.score.copy().reshape(-1, 2)
    weak = (np.arange(len(score)) % 3 == 0) & (score[:, 0] != 0.5)
    score[weak, 0] = np.where(score[weak, 0] == 1.0, 0.75, 0.25)
    score[:, 1] = 1.0 - score[:, 0]
    base.score = score.ravel()
    games = games_of(base)
    weighted = fit(design(games, strong_as_three=True))
    assert weighted.design.model.name == "rao-kupper"
    strong = np.isin(games.outcome, (0.0, 1.0))
    repeat = np.where(strong, 3, 1)
    repeated = replace(games, **{name: np.repeat(getattr(games, name), repeat, axis=0) for name in
                                    ("session", "reviewer", "first", "second", "slot_known", "length_diff", "chars")},
                       outcome=np.rint(np.repeat(games.outcome, repeat) * 2) / 2)
    assert np.allclose(weighted.params, fit(design(repeated)).params, atol=1e-8)


def test_a_judges_verdicts_on_its_own_answer_are_left_out():
    rows = []
    for s, (a, b) in enumerate([("judge", "other"), ("other", "third"), ("judge", "third")]):
        rows += [(f"s{s}", s, "judge", a, 0, 10, 1.0), (f"s{s}", s, "judge", b, 1, 10, 0.0)]
    games = games_of(from_rows(rows, scale="0-1"))
    kept = without_self_judgments(games)
    assert len(games) == 3 and len(kept) == 1
    assert {kept.models[kept.first[0]], kept.models[kept.second[0]]} == {"other", "third"}


def test_markdown_counts_give_a_coefficient_each_beside_length_and_find_none_where_none_was_planted():
    data = planted_games([0.0, 0.5, -0.5], 300, slot=0.3, tie=0.5, seed=9)
    rng = np.random.default_rng(10)
    counts = rng.poisson(2.0, size=(data.n_records, 3)).astype(np.float64)
    data.style = np.hstack([rng.integers(50, 500, size=(data.n_records, 1)).astype(np.float64), counts])
    found = bradley_terry_ranking(games_of(data), style=("length", "markdown"), n_boot=300)
    assert [c.name for c in found.style] == ["length (tokens), per SD", "headers, per SD", "list items, per SD",
                                             "bold spans, per SD"]
    assert sum(c.estimate.covers(0.0) for c in found.style) >= 3
