"""Designs that fix each reviewer's total in a session (pairwise verdicts: every call's two
scores add up to 1) carry no information in those totals: reviewer severity and anchoring are
then zero by construction, reported as not identified, never tested on floating-point noise
(89 of 100 null pairwise reports carried such a flag), and judges that also answer are not
called harsh or generous because the self-preference term pushes against the constraint."""

from __future__ import annotations

import io
import json

import numpy as np

from council_db.analysis.joint import joint_model
from council_db.analysis.joint.fixed_totals import fixed_totals
from council_db.analysis.loading.score_data import from_records, from_rows
from council_db.analysis.sessions import anomalies
from council_db.report.builder import build
from council_db.simulate import SimulationConfig, write_jsonl

JUDGES = ["judge-a", "judge-b", "judge-c"]
PAIRWISE = dict(candidates_per_session=2, swap_orders=True, pairwise=True, per_reviewer_shuffle=True)


def pairwise_records(seed: int, sessions: int = 60, **options) -> list[dict]:
    out = io.StringIO()
    write_jsonl(SimulationConfig(sessions=sessions, seed=seed, **{"reviewers": JUDGES, **PAIRWISE, **options}), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_on_pairwise_verdicts_severity_and_anchoring_are_not_identified_and_say_why():
    report = build(from_records(pairwise_records(seed=1)), resamples=20)
    assert [(p.severity, p.classification) for p in report.reviewers] == [(None, "unknown")] * 3
    assert report.anchoring == []
    assert not [f for f in report.flags if f.kind in ("reviewer_severity", "anchoring")]
    said = " ".join(report.warnings)
    assert "every reviewer's scores of a session add up to the same total (4 scores add up to 2" in said
    assert "reviewer severity, which lives only in those totals, is not identified" in said
    assert "anchoring is not identified" in said


def test_null_pairwise_reports_with_several_judges_and_swaps_raise_no_flag():
    # Before: severity (+0.00 points, CI +0.00 to +0.00) and anchoring flagged on 1e-16 noise in
    # nearly every report. The long study (benchmarks/bench_bursty.py) runs 200 such reports.
    flagged = [f.message for seed in range(5) for f in build(from_records(pairwise_records(100 + seed)),
                                                              resamples=20).flags]
    assert flagged == []


def test_judges_that_also_answer_are_never_called_harsh_or_generous_and_keep_their_self_preference():
    # Four models judging each other's pairs (peer review): self-reviews in half the calls.
    records = pairwise_records(seed=7, sessions=120, reviewers=None, self_preference=1.5)
    report = build(from_records(records), resamples=20)
    assert {p.classification for p in report.reviewers} == {"unknown"}
    assert not [f for f in report.flags if f.kind == "reviewer_severity"]
    own = report.self_preference_on_pairs  # on the pair: its own answer against third judges' verdicts
    assert own is not None and own.ci_low > 0


def test_fixed_totals_are_found_only_where_every_reviewers_total_in_a_session_is_the_same():
    pairwise = from_records(pairwise_records(seed=2, sessions=10))
    assert fixed_totals(pairwise).totals == {4: 2.0}
    ranked = from_rows([(f"s{s}", s, f"r{r}", f"m{m}", m, 100, float((m + s + r) % 3 + 1))
                        for s in range(5) for r in range(2) for m in range(3)])
    assert fixed_totals(ranked).totals == {3: 6.0}  # rankings 1..3 add up to 6
    free = from_rows([(f"s{s}", s, f"r{r}", f"m{m}", m, 100, float((m * s + r) % 7 + 1))
                      for s in range(5) for r in range(2) for m in range(3)])
    assert fixed_totals(free) is None
    assert fixed_totals(from_rows([("s0", 0, "r", "a", 0, 100, 1.0), ("s0", 0, "r", "b", 1, 100, 0.0)])) is None


def test_a_pairwise_session_where_every_judge_ties_is_no_anomaly_but_a_constant_fine_scale_session_is():
    records = pairwise_records(seed=3, sessions=80)
    tied = records[0]["session_id"]
    for line in records:
        if line["session_id"] == tied:
            line["score_value"] = 0.5  # as often happens: about 1 session in 2,000 ties everywhere
    data = from_records(records)
    found = {a.session_id: a for a in anomalies.sessions(data, joint_model.fit(data).residuals)}
    assert found[tied].reason == "every score is 0.5 (12 scores)"
    # p: at least the chance that each of its three judges ties twice, as often as the window's
    # judges do (the continuous yardstick alone said 8e-6, and such sessions were flagged in 6 of
    # 40 null reports of 200 sessions)
    cells: dict[tuple, set] = {}
    for line in records:
        cells.setdefault((line["session_id"], line["reviewer_id"]), set()).add(line["score_value"])
    tied_share = np.mean([scores == {0.5} for scores in cells.values()])
    assert found[tied].p_value >= tied_share ** 3 > 1e-4
    out = io.StringIO()
    write_jsonl(SimulationConfig(sessions=80, seed=3), out)  # scores in tenths on 1-10: constant cells are rare
    fine_records = [json.loads(line) for line in out.getvalue().splitlines()]
    for line in fine_records[:16]:
        line["score_value"] = 5.0
    fine = from_records(fine_records)
    constant = anomalies.sessions(fine, joint_model.fit(fine).residuals)[0]
    assert constant.reason == "every score is 5 (16 scores)" and constant.p_value * 80 < 0.05


def test_on_pairwise_verdicts_reviewer_trends_are_not_identified_and_not_given():
    # Before: three reviewer "trends" of -0.00 [-0.00, +0.00] points per 30 days, change search p 1.000:
    # a reviewer's residuals add up to zero in every call, so its drift (of severity) is nil by design.
    report = build(from_records(pairwise_records(seed=1)), resamples=20)
    assert [t.kind for t in report.trends] == ["model"] * len(report.models)
    assert "reviewer trends and change points (a drift of severity)" in report.not_identified.effects
    assert [p.severity_reason for p in report.reviewers] == ["not identified (pairwise)"] * 3
