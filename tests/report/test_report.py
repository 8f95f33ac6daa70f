"""The bias report, on simulated data with planted effects: it names what was planted,
its CIs cover the planted sizes, and clean data raises no flag."""

from __future__ import annotations

import json

import pytest

from council_db.analysis.loading.score_data import from_records
from council_db.report.builder import build
from tests import realdata
from tests.conftest import BACKENDS, both_backends, same_numbers, session, simulated
from tests.conftest import write_jsonl as write_lines

PLANTED = dict(reviewer_offsets={"openai/gpt-4o": -0.8, "anthropic/claude-3-5-sonnet": 0.6},
               position_effects=[0.3, 0.0, 0.0, -0.2], self_preference=0.5, verbosity=0.3)


@pytest.fixture(scope="module")
def planted():
    records, truth = simulated(sessions=300, seed=7, **PLANTED)
    return build(from_records(records), resamples=300), truth


def relative(values: dict[str, float]) -> dict[str, float]:
    mean = sum(values.values()) / len(values)
    return {k: v - mean for k, v in values.items()}


def covers(metric, value: float) -> bool:
    return metric.ci_low <= value <= metric.ci_high


def test_the_harsh_and_the_generous_reviewer_are_named_and_nobody_else(planted):
    report, truth = planted
    classes = {r.reviewer_id: r.classification for r in report.reviewers}
    assert classes == {"openai/gpt-4o": "harsh", "anthropic/claude-3-5-sonnet": "generous",
                       "google/gemini-1.5-pro": "neutral", "meta-llama/llama-3.1-70b": "neutral"}
    severity_flags = {f.subject for f in report.flags if f.kind == "reviewer_severity"}
    assert severity_flags == {"openai/gpt-4o", "anthropic/claude-3-5-sonnet"}


def test_severity_cis_cover_the_planted_offsets_relative_to_the_average_reviewer(planted):
    report, truth = planted
    expected = relative(truth["reviewer_offsets"])
    for profile in report.reviewers:
        assert covers(profile.severity, expected[profile.reviewer_id]), profile.reviewer_id


def test_position_self_preference_and_verbosity_are_flagged_with_cis_covering_the_plant(planted):
    report, truth = planted
    assert {f.kind for f in report.flags} >= {"position", "self_preference", "verbosity"}
    assert covers(report.self_preference, truth["self_preference"])
    per_log = report.length.adjusted_effect_per_log_length
    assert covers(per_log, truth["verbosity"] / truth["log_length_sd"])
    slots = relative(dict(enumerate(truth["position_effects"])))
    assert sum(covers(s, slots[s.position]) for s in report.position.slot_effects) >= 3  # clipping at 10 nibbles


def test_every_number_carries_its_sample_size_window_and_tier(planted):
    report, _ = planted
    assert (report.window.sessions, report.confidence) == (300, "high")
    assert report.window.start < report.window.end
    for metric in [report.self_preference, report.agreement, report.length.headline,
                   *(r.severity for r in report.reviewers), *report.position.slot_means]:
        assert metric.n_sessions > 0 and metric.n_records > 0 and metric.confidence == "high"
        assert metric.ci_low <= metric.estimate <= metric.ci_high


def test_clean_data_raises_no_flag_and_names_nobody():
    records, _ = simulated(sessions=300, seed=3)
    report = build(from_records(records), resamples=200)
    assert report.flags == []
    assert {r.classification for r in report.reviewers} == {"neutral"}


@pytest.mark.parametrize(("sessions", "tier"), [(5, "insufficient"), (15, "preliminary"), (30, "moderate"),
                                                (60, "high")])
def test_tiers_follow_the_number_of_sessions(sessions, tier):
    lines = [line for n in range(sessions)
             for line in session(f"s{n:03d}", timestamp=f"2025-01-01T00:{n % 60:02d}:00Z")]
    report = build(from_records(lines), resamples=100)
    assert report.confidence == tier
    if tier == "insufficient":
        assert report.reviewers == [] and report.length is None and report.flags == []
        assert any("collecting data" in w for w in report.warnings)
    if tier == "preliminary":
        assert any("volatile" in w for w in report.warnings)


def test_old_schema_records_are_left_out_of_the_position_analysis_and_said_so():
    records, _ = simulated(sessions=60, seed=2, schema_version="1.1.0")
    report = build(from_records(records), resamples=100)
    assert report.position is None
    assert any("not a display slot" in w for w in report.warnings)
    assert report.reviewers  # everything else is still analysed


def test_per_reviewer_shuffles_show_primacy_as_first_shown_wins():
    records, _ = simulated(sessions=300, seed=4, per_reviewer_shuffle=True, position_effects=[0.8, 0, 0, 0])
    report = build(from_records(records), resamples=200)
    consistency = report.position.consistency
    assert consistency.pattern == "primacy" and consistency.first_shown_wins.ci_low > 0.5


def test_longer_and_better_models_make_raw_length_look_rewarded_and_the_report_says_so():
    quality = {"openai/gpt-4o": 1.0, "anthropic/claude-3-5-sonnet": 0.3, "google/gemini-1.5-pro": -0.3,
               "meta-llama/llama-3.1-70b": -1.0}
    records, _ = simulated(sessions=300, seed=5, model_quality=quality, length_quality_corr=0.95)
    report = build(from_records(records), resamples=200)
    assert report.length.headline.ci_low > 0  # raw: longer answers score higher
    assert report.length.adjusted_effect.ci_low <= 0 <= report.length.adjusted_effect.ci_high
    assert report.length.disagreement and "which models write longer" in report.length.disagreement
    assert not any(f.kind == "verbosity" for f in report.flags)


# --- through the command line -----------------------------------------------------------

def run(*args: str, input: str | None = None):
    from typer.testing import CliRunner

    from council_db.cli.app import app

    return CliRunner().invoke(app, list(args), input=input)


@pytest.fixture(scope="module")
def simulated_file(tmp_path_factory):
    """120 sessions over the last 100 days, gpt-4o planted harsh."""
    path = tmp_path_factory.mktemp("report") / "in.jsonl"
    run("simulate", "-o", str(path), "--sessions", "120", "--seed", "9", "--days", "100",
        "--reviewer-offset", "openai/gpt-4o=-1.0")
    return path


@pytest.fixture(scope="module", params=BACKENDS)
def simulated_db(request, simulated_file, tmp_path_factory):
    """The simulated file imported into SQLite, then into PostgreSQL: a database URL."""
    if request.param == "postgresql":
        cluster = request.getfixturevalue("pg_cluster")
        url = cluster.database()
        request.addfinalizer(lambda: cluster.drop(url))
    else:
        url = f"sqlite:///{tmp_path_factory.mktemp('report') / 'council.db'}"
    run("--db", url, "import", str(simulated_file))
    return url


def report_json(cli_db, *args):
    result = run("--db", str(cli_db), "bias-report", "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_same_data_gives_the_same_report_numbers_on_sqlite_and_postgresql(simulated_file, tmp_path, pg_url):
    sqlite_url = f"sqlite:///{tmp_path / 'council.db'}"
    reports = []
    for url in (sqlite_url, pg_url):
        run("--db", url, "import", str(simulated_file))
        reports.append(report_json(url))
        reports.append(report_json(url, "--sessions", "50", "--seed", "3", "--reviewer", "openai/gpt-4o",
                                   "--reviewer", "google/gemini-1.5-pro"))
    assert reports[0]["window"]["sessions"] == 120 and reports[0]["flags"]
    for report in reports:
        report.pop("generated_at")
    assert same_numbers(reports[0], reports[2]) and same_numbers(reports[1], reports[3])


def test_the_json_report_holds_the_documented_contract(simulated_db):
    report = report_json(simulated_db)
    assert {"start", "end", "sessions", "records"} <= set(report["window"])
    assert {"headline", "naive_pooled_r", "fixed_effect_r", "random_effects_r", "adjusted_effect"} <= set(
        report["length"])
    assert {"slot_means", "slot_effects", "consistency"} <= set(report["position"])
    assert {"reviewer_id", "records", "raw_mean", "severity", "classification", "scale_sd",
            "self_preference"} <= set(report["reviewers"][0])
    assert {"estimate", "ci_low", "ci_high", "n_sessions", "n_records", "confidence"} <= set(
        report["length"]["headline"])
    assert {"position"} <= set(report["position"]["slot_means"][0])
    for key in ("confidence", "excluded", "self_preference", "agreement", "flags", "warnings"):
        assert key in report
    flag = report["flags"][0]
    assert {"kind", "subject", "estimate", "p_value", "q_value", "message"} <= set(flag)


def test_windows_select_the_latest_sessions_days_and_time_ranges(simulated_db):
    everything = report_json(simulated_db)["window"]
    assert report_json(simulated_db, "--sessions", "40")["window"]["sessions"] == 40
    recent = report_json(simulated_db, "--days", "30")["window"]
    assert 20 < recent["sessions"] < 60 and recent["end"] == everything["end"]
    middle = sorted([everything["start"], everything["end"]])
    ranged = report_json(simulated_db, "--since", middle[0], "--until", middle[1])["window"]
    assert ranged["start"] == everything["start"] and ranged["end"] < everything["end"]


@both_backends
def test_as_of_reproduces_a_report_after_more_data_arrived(tmp_path, db_url):
    from datetime import datetime, timezone

    db = db_url
    run("--db", db, "simulate", "-o", str(tmp_path / "a.jsonl"), "--sessions", "40", "--seed", "1")
    run("--db", db, "import", str(tmp_path / "a.jsonl"))
    before = report_json(db)
    moment = datetime.now(timezone.utc).isoformat()
    run("--db", db, "simulate", "-o", str(tmp_path / "b.jsonl"), "--sessions", "40", "--seed", "2",
        "--reviewer-offset", "openai/gpt-4o=-2")
    run("--db", db, "import", str(tmp_path / "b.jsonl"))  # older sessions, imported after the moment
    assert report_json(db)["window"]["sessions"] == 80
    again = report_json(db, "--as-of", moment)
    assert again["window"]["sessions"] == 40
    assert again["reviewers"] == before["reviewers"] and again["length"] == before["length"]


@both_backends
def test_as_of_leaves_out_records_a_later_import_added_to_earlier_sessions(tmp_path, db_url):
    """FastChat grades each model on the same questions: a later judgment file adds records to
    the sessions (q81/t1, ...) an earlier one made, and --as-of must leave them out too."""
    from datetime import datetime, timezone

    lines = realdata.MT_BENCH_JUDGMENTS.read_text(encoding="utf-8").splitlines(keepends=True)
    first, later = tmp_path / "first.jsonl", tmp_path / "later.jsonl"
    first.write_text("".join(line for line in lines if json.loads(line)["model"] != "mistral-orpo-mix"))
    later.write_text("".join(line for line in lines if json.loads(line)["model"] == "mistral-orpo-mix"))
    run("--db", db_url, *realdata.mt_bench_import(first))
    before = report_json(db_url)
    moment = datetime.now(timezone.utc).isoformat()
    run("--db", db_url, *realdata.mt_bench_import(later))
    grown = report_json(db_url)
    assert grown["window"]["sessions"] == before["window"]["sessions"]  # the same questions, more records
    assert grown["window"]["records"] == before["window"]["records"] + 160
    again = report_json(db_url, "--as-of", moment)
    asked = {"as_of", "requested", "requested_end"}  # what the window asked, not what it found
    assert {k: v for k, v in again["window"].items() if k not in asked} == \
        {k: v for k, v in before["window"].items() if k not in asked}
    for part in ("reviewers", "length", "flags"):
        assert again[part] == before[part], part


def test_a_reviewer_filter_keeps_only_that_reviewers_scores(simulated_db):
    report = report_json(simulated_db, "--reviewer", "openai/gpt-4o", "--reviewer", "google/gemini-1.5-pro")
    assert {r["reviewer_id"] for r in report["reviewers"]} == {"openai/gpt-4o", "google/gemini-1.5-pro"}


def test_text_and_markdown_formats_read_as_a_report(simulated_db):
    text = run("--db", str(simulated_db), "bias-report").stdout
    assert "harsh reviewer openai/gpt-4o" in text and "REVIEWERS" in text and "LENGTH" in text
    markdown = run("--db", str(simulated_db), "bias-report", "--format", "markdown").stdout
    assert markdown.startswith("# Bias report") and "| reviewer |" in markdown


def test_the_json_schema_describes_the_report(simulated_db):
    schema = json.loads(run("bias-report", "--schema").stdout)
    assert {"window", "length", "position", "reviewers", "flags", "warnings"} <= set(schema["properties"])


def test_a_bad_time_is_a_usage_error(simulated_db):
    result = run("--db", str(simulated_db), "bias-report", "--since", "soon")
    assert result.exit_code == 2


@both_backends
def test_the_audit_shows_indicators_with_t_distribution_p_values(cli, tmp_path):
    from scipy.stats import pearsonr

    lengths = [100, 200, 300, 400, 500]
    scores = [5.0, 5.5, 7.5, 6.0, 8.0]  # r ~ 0.79 over 5 answers: p ~ 0.11, not significant
    lines = [{"schema_version": "1.2.0", "session_id": "one", "timestamp": "2025-01-01T00:00:00Z",
              "reviewer_id": "judge", "model_id": f"m{i}", "position": i, "response_length_chars": lengths[i],
              "score_value": scores[i], "score_scale": "1-10"} for i in range(5)]
    cli("import", str(write_lines(tmp_path / "one.jsonl", lines)))
    audit = json.loads(cli("audit", "one", "--format", "json").stdout)
    reference = pearsonr(lengths, scores)
    assert audit["length"]["r"] == pytest.approx(reference.statistic, abs=1e-9)
    assert audit["length"]["p_value"] == pytest.approx(reference.pvalue, abs=1e-9) and audit["length"]["p_value"] > 0.05
    assert "INDICATORS ONLY" in cli("audit", "one").stdout


@both_backends
def test_auditing_an_unknown_session_names_it(cli):
    cli("db", "upgrade")
    result = cli("audit", "nope")
    assert result.exit_code != 0 and "nope" in str(result.exception or result.output)


def test_a_metric_that_cannot_be_computed_is_null_with_a_warning_saying_why():
    lines = [line for n in range(30)
             for line in session(f"s{n:02d}", reviewers=1, timestamp=f"2025-01-01T00:{n:02d}:00Z")]
    report = build(from_records(lines), resamples=50)
    assert report.agreement is None and any("at least two reviewers" in w for w in report.warnings)
    assert report.self_preference is None and any("self-preference" in w for w in report.warnings)
    assert any("always shown in display slot" in w for w in report.warnings)


@pytest.mark.parametrize("design, shuffle", [("one_shuffle", False), ("per_reviewer", True)])
def test_the_report_says_which_presentation_design_the_data_came_from(design, shuffle):
    records, _ = simulated(sessions=30, seed=2, per_reviewer_shuffle=shuffle)
    data = from_records(records)
    assert build(data, resamples=50).position.designs == {design: 30}


def test_a_latin_square_is_recognised_as_a_balanced_design():
    from council_db.ingest.orders import presentation_orders

    models = [f"m{i}" for i in range(4)]
    orders = presentation_orders(models, models, seed=1, design="latin")
    records = []
    for s in range(12):
        for reviewer in models:
            for label, entry in orders.label_to_model(reviewer).items():
                records.append({"session_id": f"s{s}", "timestamp": f"2025-12-{s + 1:02d}T10:00:00+00:00",
                                "reviewer_id": reviewer, "model_id": entry["model"],
                                "position": entry["display_index"], "response_length_chars": 500 + 10 * s,
                                "score_value": 7.0, "schema_version": "1.2.0"})
    assert build(from_records(records), resamples=20).position.designs == {"balanced": 12}
