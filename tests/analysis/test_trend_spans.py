"""A subject whose own data spans far less than the unit slopes are stated in: MT-bench's
GPT-4 grading run (every session's first grading within 23 minutes; each of GPT-4's four
prompts, a reviewer of its own, graded for at most 7 of them) imported beside three
months of other judgments. The window spans 96 days, so slopes are stated per 30 days; a
slope per 30 days from 23 minutes extrapolates it about 1,900-fold (it read -853 points on a
1-10 scale), and its noise swayed the choice of the typical subject, widening the other
subjects' intervals tenfold. Such a subject is stated across its own span, is not one of the
typical subjects, and is drawn apart from the per-30-days chart.

The spans asserted are computed by the test from the published file with plain Python."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from html import escape

import numpy as np
import pytest

from council_db.analysis.drift.subjects import session_groups
from council_db.analysis.loading.score_data import from_records
from council_db.report.builder import build
from council_db.report.trend_units import duration
from council_db.simulate import SimulationConfig, write_jsonl
from council_db.simulate.config import DEFAULT_MODELS
from tests import realdata
from tests.conftest import Cli, simulated

SIMULATED_END = datetime(2024, 6, 30, tzinfo=timezone.utc)  # three months after MT-bench's gradings
DAY = 86_400.0
TIME_KINDS = {"trend", "change_point"}


def mt_bench_spans_seconds() -> dict[str, float]:
    """Per MT-bench model: the longest first-to-last time of the sessions one judge (GPT-4 under
    one of its prompts, judge[1]: each prompt is a reviewer of its own) graded it in, a session's
    time being its first rated grading: a slope is fitted within a judge-model pair."""
    rated = [j for j in realdata.mt_bench_judgments() if j["score"] != realdata.NO_RATING]
    first: dict[tuple, float] = defaultdict(lambda: float("inf"))
    for j in rated:
        first[(j["question_id"], j["turn"])] = min(first[(j["question_id"], j["turn"])], j["tstamp"])
    times = defaultdict(list)
    for j in rated:
        times[(j["model"], tuple(j["judge"]))].append(first[(j["question_id"], j["turn"])])
    spans: dict[str, float] = defaultdict(float)
    for (model, _judge), pair in times.items():
        spans[model] = max(spans[model], max(pair) - min(pair))
    return dict(spans)


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """Two SQLite files: MT-bench plus 300 simulated sessions over 90 days, and the simulated alone."""
    folder = tmp_path_factory.mktemp("spans")
    simulated_file = folder / "simulated.jsonl"
    with simulated_file.open("w") as out:
        write_jsonl(SimulationConfig(sessions=300, seed=1, end=SIMULATED_END), out)
    mixed, alone = Cli(folder / "mixed.db"), Cli(folder / "alone.db")
    assert mixed(*realdata.mt_bench_import()).exit_code == 0
    for cli in (mixed, alone):
        assert cli("import", str(simulated_file)).exit_code == 0
    return mixed, alone


@pytest.fixture(scope="module")
def mixed_report(stores):
    result = stores[0]("bias-report", "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_mt_bench_subjects_are_stated_across_their_own_minutes_not_per_30_days(stores, mixed_report):
    spans = mt_bench_spans_seconds()
    assert {round(span / 60) for span in spans.values()} == {7}  # the longest run of one prompt of GPT-4's
    trends = {t["subject"]: t for t in mixed_report["trends"] if t["subject"] in spans}  # each of one kind
    assert set(trends) == set(spans)
    for trend in mixed_report["trends"]:
        subject = trend["subject"]
        assert trend["span_days"] > 90  # the window's span: the report's unit is 30 days
        if subject not in spans:
            assert not trend["short_span"] and trend["subject_span_days"] > 80
            continue
        assert trend["short_span"]
        assert trend["subject_span_days"] == pytest.approx(spans[subject] / DAY, abs=1e-6)
        per_30d, own = trend["slope_per_30d"], trend["change_over_subject_span"]
        for key in ("estimate", "ci_low", "ci_high"):
            assert own[key] == pytest.approx(per_30d[key] * spans[subject] / (30 * DAY), rel=1e-6)
        assert own["ci_high"] - own["ci_low"] < 9  # within the 1-10 scale's width
        assert (own["n_sessions"], own["n_records"]) == (per_30d["n_sessions"], per_30d["n_records"])
    assert max(abs(trends[s]["slope_per_30d"]["estimate"]) for s in spans) > 100  # what per 30 days read

    text = stores[0]("bias-report", "--wide").stdout  # a subject's row on one line
    for subject in spans:
        line = next(line for line in text.splitlines() if line.strip().startswith(("reviewer", "model"))
                    and line.split()[1] == subject)
        own = trends[subject]["change_over_subject_span"]
        assert f"{own['estimate']:+.2f} [{own['ci_low']:+.2f}, {own['ci_high']:+.2f}]" in line
        assert f"across its own {duration(spans[subject] / DAY)}" in line
        assert f"{trends[subject]['slope_per_30d']['estimate']:+.2f}" not in line


def test_subjects_of_23_minutes_do_not_widen_the_other_subjects_intervals(stores, mixed_report):
    alone = json.loads(stores[1]("bias-report", "--format", "json").stdout)
    widths = {(t["kind"], t["subject"]): t["slope_per_30d"]["ci_high"] - t["slope_per_30d"]["ci_low"]
              for t in alone["trends"]}
    for trend in mixed_report["trends"]:
        if (trend["kind"], trend["subject"]) in widths:
            width = trend["slope_per_30d"]["ci_high"] - trend["slope_per_30d"]["ci_low"]
            assert width < 1.5 * widths[(trend["kind"], trend["subject"])], trend["subject"]


def test_the_trends_chart_draws_per_30_days_only_the_subjects_observed_over_it(stores, tmp_path):
    page_path = tmp_path / "report.html"
    assert stores[0]("bias-report", "-o", str(page_path)).exit_code == 0
    page = page_path.read_text(encoding="utf-8")
    chart = page.split('<section class="chart" id="trends">')[1].split("</section>")[0]
    per_30_days, own_span = chart.split("</svg>")[:2]
    assert "points per 30 days" in per_30_days and "mistral-orpo" not in per_30_days and "gpt-4o" in per_30_days
    assert escape("points across each subject's own span") in own_span
    for subject, span in mt_bench_spans_seconds().items():
        assert f"{subject} ({duration(span / DAY)})" in own_span


def test_trends_lists_the_short_subjects_apart_across_their_own_span(stores):
    result = stores[0]("trends", "--by", "model", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = {row["subject"]: row for row in json.loads(result.stdout)["trends"]}
    spans = mt_bench_spans_seconds()
    for subject, row in rows.items():
        assert row["short_span"] == (subject in spans)
        if subject in spans:
            assert row["subject_span_days"] == pytest.approx(spans[subject] / DAY, abs=1e-6)
            for key, slope_key in (("", "slope_per_30d"), ("_ci_low", "ci_low"), ("_ci_high", "ci_high")):
                assert row[f"change_over_subject_span{key}"] == pytest.approx(
                    row[slope_key] * spans[subject] / (30 * DAY), rel=1e-6)
    text = stores[0]("trends", "--by", "model").stdout
    per_30_days, own_span = text.split("across each one's own span")[:2]
    assert "mistral-orpo" not in per_30_days and "openai/gpt-4o" in per_30_days
    assert "7 min" in own_span and all(subject in own_span for subject in spans)


# --- simulated: a 23-minute run beside 90 days, with and without a planted drift


def with_short_run(seed: int, **config) -> list[dict]:
    """300 sessions over 90 days, and 80 sessions of four other models within 23 minutes, a
    week before the end."""
    long_run, _ = simulated(sessions=300, seed=seed, end=SIMULATED_END, **config)
    short_run, _ = simulated(sessions=80, seed=seed + 1000, end=SIMULATED_END - timedelta(days=7), days=23 / 1440,
                             models=[f"short/model-{i}" for i in range(4)])
    return long_run + short_run


@pytest.mark.parametrize("seed", [41, 42])
def test_a_planted_drift_is_recovered_per_30_days_beside_a_short_run(seed):
    drifter = DEFAULT_MODELS[0]
    report = build(from_records(with_short_run(seed, drift={drifter: 1.0})), resamples=100)
    trend = next(t for t in report.trends if t.kind == "reviewer" and t.subject == drifter)
    assert not trend.short_span
    assert trend.slope_per_30d.ci_low <= 1.0 * 30 / 90 <= trend.slope_per_30d.ci_high
    flagged = {f.subject for f in report.flags if f.kind in TIME_KINDS}
    assert f"reviewer {drifter}" in flagged and flagged <= {f"reviewer {drifter}"}
    flag = next(f for f in report.flags if f.kind == "trend")
    assert "points per 30 days" in flag.message
    short = [t for t in report.trends if t.subject.startswith("short/")]
    assert short and all(t.short_span and t.subject_span_days < 23 / 1440 + 1e-9 for t in short)


@pytest.mark.parametrize("seed", [51, 52, 53])
def test_a_short_run_beside_stationary_data_raises_no_time_flag(seed):
    report = build(from_records(with_short_run(seed)), resamples=100)
    assert not [f for f in report.flags if f.kind in TIME_KINDS]
    long_widths = [t.slope_per_30d.ci_high - t.slope_per_30d.ci_low for t in report.trends if not t.short_span]
    assert long_widths and max(long_widths) < 0.5  # about +-0.1 per 30 days at 300 sessions: not swayed
    assert np.isfinite([t.change_over_subject_span.estimate for t in report.trends if t.short_span]).all()


def test_trends_on_mt_bench_alone_states_the_change_across_its_own_minutes_not_per_30_days(tmp_path):
    """The window is one 23-minute run: `trends` states slopes across the window's span, as
    `bias-report` does, not per 30 days (it printed -1,363 points per 30 days); each model, graded
    by one prompt of GPT-4's for 7 of them, across its own span."""
    cli = Cli(tmp_path / "council.db")
    assert cli(*realdata.mt_bench_import()).exit_code == 0
    rows = json.loads(cli("trends", "--by", "model", "--format", "json").stdout)["trends"]
    spans = mt_bench_spans_seconds()
    text = cli("trends", "--by", "model").stdout
    assert "points across the window's 23 minutes" in text and "slope/30d" not in text
    for row in rows:
        span = spans[row["subject"]]
        assert row["short_span"] and row["subject_span_days"] == pytest.approx(span / DAY, abs=1e-6)
        change = row["slope_per_30d"] * span / (30 * DAY)
        assert abs(change) < 9 and f"{change:+.3f}" in text
        assert f"{row['slope_per_30d']:+.3f}" not in text


def test_a_drift_within_a_short_run_is_flagged_across_its_own_span_not_per_30_days():
    long_run, _ = simulated(sessions=300, seed=61, end=SIMULATED_END)
    short_run, _ = simulated(sessions=80, seed=62, end=SIMULATED_END - timedelta(days=7), days=23 / 1440,
                             models=[f"short/model-{i}" for i in range(4)], drift={"short/model-0": 3.0})
    report = build(from_records(long_run + short_run), resamples=100)
    flag = next(f for f in report.flags if f.kind == "trend" and f.subject == "reviewer short/model-0")
    trend = next(t for t in report.trends if t.kind == "reviewer" and t.subject == "short/model-0")
    own = trend.change_over_subject_span
    assert trend.short_span and own.ci_low > 0
    assert (f"drift of reviewer short/model-0: {own.estimate:+.2f} points across its own 23 minutes of data "
            f"(too short to state per 30 days)") in flag.message
    assert f"{trend.slope_per_30d.estimate:+.2f}" not in flag.message


def test_a_short_runs_subjects_are_told_against_the_subjects_of_its_own_sessions():
    """Residuals are net of session effects, so one reviewer drifting +3 in the short run makes
    the run's other three drift -0.75 in residuals; against the typical subject of the 90 days
    (a slope of about 0) they read as drifting and were flagged. Against the typical subject of
    their own sessions the drifter reads +3 and nobody else moves, as in the run's own report."""
    long_run, _ = simulated(sessions=300, seed=61, end=SIMULATED_END)
    short_run, _ = simulated(sessions=80, seed=62, end=SIMULATED_END - timedelta(days=7), days=23 / 1440,
                             models=[f"short/model-{i}" for i in range(4)], drift={"short/model-0": 3.0})
    report = build(from_records(long_run + short_run), resamples=100)
    assert {f.subject for f in report.flags if f.kind in TIME_KINDS} == {"reviewer short/model-0"}
    drifter = next(t for t in report.trends if t.kind == "reviewer" and t.subject == "short/model-0")
    assert drifter.change_over_subject_span.ci_low <= 3.0 <= drifter.change_over_subject_span.ci_high


def test_a_subject_sharing_no_session_with_another_of_its_kind_has_no_trend_and_the_report_says_why(mixed_report):
    """MT-bench's judge (GPT-4 under each of its prompts) is the only reviewer of its sessions:
    its residuals sum to 0 in every session, and its drift cannot be told from a change in the
    questions."""
    judges = {f"{judge} · prompt {prompt}" for judge, prompt in (j["judge"] for j in realdata.mt_bench_judgments())}
    assert len(judges) == 4
    assert not judges & {t["subject"] for t in mixed_report["trends"] if t["kind"] == "reviewer"}
    for judge in judges:
        assert any(f"reviewer {judge} shares no session with another reviewer" in w for w in mixed_report["warnings"])


def test_judges_joining_a_council_for_23_minutes_do_not_widen_the_others_intervals():
    """In the same sessions as the council's reviewers, three judges of 23 minutes are in their
    session group: as candidates for the typical subject, their slopes of +-1,000 points per 30
    days swayed its choice (the others' CIs were a median 6 and up to 730 points wide)."""
    long_run, _ = simulated(sessions=300, seed=71, end=SIMULATED_END)
    short_run, _ = simulated(sessions=80, seed=72, end=SIMULATED_END - timedelta(days=7), days=23 / 1440,
                             reviewers=list(DEFAULT_MODELS) + [f"short/judge-{i}" for i in range(3)])
    report = build(from_records(long_run + short_run), resamples=100)
    reviewers = [t for t in report.trends if t.kind == "reviewer"]
    assert {t.subject for t in reviewers if t.short_span} == {f"short/judge-{i}" for i in range(3)}
    assert max(t.slope_per_30d.ci_high - t.slope_per_30d.ci_low for t in reviewers if not t.short_span) < 0.5
    assert not [f for f in report.flags if f.kind in TIME_KINDS]


def test_mt_bench_beside_other_data_reads_as_it_reads_alone(stores, mixed_report, tmp_path):
    """Told against the typical model of its own sessions, a run's change across its own span
    is what its own report says across that span (the joint model, fitted on both,
    shares the length and slot effects: residuals move a little)."""
    alone = Cli(tmp_path / "council.db")
    assert alone(*realdata.mt_bench_import()).exit_code == 0
    own_report = {t["subject"]: t for t in json.loads(alone("bias-report", "--format", "json").stdout)["trends"]}
    for trend in mixed_report["trends"]:
        if trend["subject"] in mt_bench_spans_seconds():
            beside = trend["change_over_subject_span"]
            by_itself = own_report[trend["subject"]]["change_over_subject_span"]
            assert beside["estimate"] == pytest.approx(by_itself["estimate"], abs=0.1)
            width = by_itself["ci_high"] - by_itself["ci_low"]
            assert beside["ci_high"] - beside["ci_low"] == pytest.approx(width, rel=0.1)


def test_session_groups_join_subjects_through_chains_of_shared_sessions():
    """Subject k shares session k with subject k + 1, for 0..8 (a chain of ten), 10 and 11 share
    one session, and 12 has its own: three groups, whatever the order of the codes."""
    rng = np.random.default_rng(0)
    pairs = [(k, k) for k in range(9)] + [(k, k + 1) for k in range(9)] + [(9, 10), (9, 11), (10, 12)]
    order = rng.permutation(13)  # subject codes in another order than the chain
    session = np.array([s for s, _ in pairs])
    subject = order[[k for _, k in pairs]]
    groups = session_groups(session, subject, 13)
    expected = [set(order[:10].tolist()), set(order[10:12].tolist()), {int(order[12])}]
    found = [set(np.flatnonzero(groups == label).tolist()) for label in np.unique(groups)]
    assert sorted(found, key=min) == sorted(expected, key=min)
