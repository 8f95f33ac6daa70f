"""Self-preference on pairwise verdicts, defined on the pair: the log odds that a judge picks its
own answer, against third judges' verdicts on the same two answers in the same order
(Mantel-Haenszel over (pair, order) strata, CI clustered by pair). Sessions play no part, so
regrouping the same games into sessions leaves it as it is. The long study (coverage of the CI,
calm over 200 null data sets): benchmarks/bench_pair_self_preference.py."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest

from council_db.analysis.loading.score_data import from_records, from_rows
from council_db.analysis.self_preference.on_pairs import self_preference_on_pairs
from council_db.analysis.stats import benjamini_hochberg
from council_db.report.builder import build
from council_db.simulate import SimulationConfig, write_jsonl

PEERS = dict(candidates_per_session=2, swap_orders=True, pairwise=True, per_reviewer_shuffle=True)
# benchmarks/bench_pair_self_preference.py: the pooled log odds ratio on 20,000 sessions with a
# self-preference of 1 point planted on the simulator's latent scale
PLANTED_TRUTH = 1.083


def peer_review(seed: int, sessions: int, planted: float = 0.0) -> list[dict]:
    """Four models judging each other's answers in pairs, both orders: two judges with a stake
    in each pair, two third judges."""
    out = io.StringIO()
    write_jsonl(SimulationConfig(sessions=sessions, seed=seed, self_preference=planted, **PEERS), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def regrouped(lines: list[dict], by: str) -> list[dict]:
    """The same judgments, one session per game (a judge's call on one order) or per judge
    (both its orders); as simulated, one session holds every judge's calls on the pair."""
    first = {}
    for line in lines:
        if line["position"] == 0:
            first.setdefault((line["session_id"], line["reviewer_id"]), []).append(line["model_id"])
    out = []
    for line in lines:
        key = (line["session_id"], line["reviewer_id"])
        game = line["model_id"] if line["position"] == 0 else next(m for m in first[key] if m != line["model_id"])
        out.append({**line, "session_id": "/".join(key) + (f"/{game}" if by == "game" else "")})
    return out


def figures(report) -> dict[str | None, tuple[float, float, float]]:
    own = {r.reviewer_id: r.self_preference_on_pairs for r in report.reviewers}
    own[None] = report.self_preference_on_pairs
    return {judge: (m.estimate, m.ci_low, m.ci_high) for judge, m in own.items()}


def test_self_preference_on_pairs_is_the_same_however_games_are_grouped_into_sessions():
    lines = peer_review(seed=5, sessions=60, planted=1.0)
    found = {by: figures(build(from_records(regrouped(lines, by) if by else lines), resamples=10))
             for by in ("game", "judge", None)}
    assert len(found[None]) == 5  # pooled and each of the four judges
    for judge, (estimate, low, high) in found[None].items():
        for by in ("game", "judge"):
            assert found[by][judge] == pytest.approx((estimate, low, high), abs=1e-12)


def test_the_odds_ratio_is_mantel_haenszels_over_pairs_in_one_order_against_third_judges():
    # Judge "a" answers against "b" on two prompts (answers told apart by their lengths), each
    # pair shown in one order; "a" judges it, third judges "t" and "u" judge it too, and "b"
    # (a stake of its own) is left out. Prompt 1: a wins its own call; t: a loses, u: a ties.
    # Prompt 2: a ties its own call; t: a wins, u: a loses.
    rows = []
    verdicts = {1: {"a": 1.0, "t": 0.0, "u": 0.5, "b": 0.0}, 2: {"a": 0.5, "t": 1.0, "u": 0.0, "b": 0.0}}
    for prompt, calls in verdicts.items():
        for judge, own_won in calls.items():
            session = f"p{prompt}/{judge}"  # one session per game: sessions must not matter
            rows += [(session, prompt, judge, "a", 0, 100 * prompt, own_won),
                     (session, prompt, judge, "b", 1, 100 * prompt + 7, 1.0 - own_won)]
    found = {f.judge: f for f in self_preference_on_pairs(from_rows(rows, scale="0-1"))}
    # stratum 1: a = 1, b = 0 (own); c = 0.5, d = 1.5 (third judges); n = 3
    # stratum 2: a = 0.5, b = 0.5; c = 1, d = 1; n = 3
    r, s = 1 * 1.5 / 3 + 0.5 * 1 / 3, 0 * 0.5 / 3 + 0.5 * 1 / 3
    assert found["a"].estimate.estimate == pytest.approx(math.log(r / s))
    assert found["a"].estimate.n_sessions == 2  # two pairs
    assert found["a"].n_records == 12 and found["a"].n_sessions == 6  # b's own calls are not in a's strata
    assert math.isnan(found["b"].estimate.estimate)  # b never loses its own calls: no odds ratio


def test_a_planted_self_preference_is_found_for_every_judge_and_its_size_recovered():
    report = build(from_records(peer_review(seed=11, sessions=120, planted=1.0)), resamples=10)
    pooled = report.self_preference_on_pairs
    assert pooled.ci_low <= PLANTED_TRUTH <= pooled.ci_high
    assert sorted(f.subject for f in report.flags if f.kind == "self_preference") == \
        sorted(r.reviewer_id for r in report.reviewers)
    assert report.self_preference is None  # the joint model's points are not what a pair says


def test_with_nothing_planted_judges_are_rarely_flagged():
    # 40 null data sets: a false flag rate of 5% would flag 2 on average; 0.025 over 200 in the benchmark
    flagged = 0
    for seed in range(40):
        found = self_preference_on_pairs(from_records(peer_review(seed=seed, sessions=60)))
        p = np.array([f.estimate.p_value for f in found if f.judge is not None])
        flagged += bool((benjamini_hochberg(p) <= 0.05).any())
    assert flagged <= 2
