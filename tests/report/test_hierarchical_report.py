"""`bias-report --method bayes`: the JSON keeps every frequentist figure and adds the
"hierarchical" part (each effect's posterior with its n and 95% credible interval, the prior,
the flags, each reviewer's severity path and since when it is stable); text, Markdown and HTML
state each effect with its credible interval and posterior probability; the default report
has no such part; a bad --method is one usage line."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Cli, simulated, write_jsonl

HARSH = "openai/gpt-4o"


@pytest.fixture(scope="module")
def cli(tmp_path_factory):
    where = tmp_path_factory.mktemp("bayes")
    records, _ = simulated(sessions=30, seed=3, reviewer_offsets={HARSH: -1.0}, reviewer_spread=0.2,
                           verbosity=0.3, self_preference=0.4, position_effects=[0.4])
    cli = Cli(where / "council.db")
    assert cli("import", str(write_jsonl(where / "records.jsonl", records))).exit_code == 0
    return cli


def test_the_json_keeps_the_frequentist_figures_and_adds_the_hierarchical_part(cli):
    plain = json.loads(cli("bias-report", "--format", "json").stdout)
    bayes = json.loads(cli("bias-report", "--format", "json", "--method", "bayes").stdout)
    assert "hierarchical" not in plain and tuple(map(int, bayes["report_schema_version"].split("."))) >= (1, 8, 0)
    for report in (plain, bayes):
        report.pop("generated_at")
    part = bayes.pop("hierarchical")
    assert bayes == plain  # the frequentist figures are the same document
    assert {s["component"] for s in part["prior"]} == {"reviewer", "candidate", "slot", "length", "self", "answer"}
    assert all(s["sd"] > 0 and s["n"] == 4 for s in part["prior"] if s["component"] != "answer")
    answers = next(s for s in part["prior"] if s["component"] == "answer")
    assert answers["sd"] > 0 and answers["n"] == bayes["window"]["sessions"] * 4  # four judges score every answer
    harsh = next(r for r in part["reviewers"] if r["reviewer_id"] == HARSH)
    severity = harsh["severity"]
    assert severity["ci_low"] < severity["estimate"] < severity["ci_high"] < 0 and severity["p_positive"] < 0.001
    assert severity["n_sessions"] == 30 and severity["n_records"] == 120 and severity["confidence"] == "moderate"
    assert harsh["severity_path"]["sessions"][-1] == 30 and 2 <= harsh["stable_since"] <= 30
    assert {(f["kind"], f["subject"], f["statement"]) for f in part["flags"]} >= {
        ("reviewer_severity", HARSH, "harsh"), ("verbosity", "length", "longer answers score higher"),
        ("self_preference", "pooled over reviewers", "reviewers prefer their own answers"),
        ("position", "display slots", "differ; slot 0 leads and scores higher than the average slot")}
    assert all(f["probability"] > 0.95 and f["q_value"] <= 0.05 for f in part["flags"])
    position = next(f for f in part["flags"] if f["kind"] == "position")
    assert position["metric"] == part["position"][0]  # the slot that leads


def test_text_markdown_and_html_state_each_effect_with_its_credible_interval_and_probability(cli):
    text = cli("bias-report", "--method", "bayes", "--wide").stdout
    assert "HIERARCHICAL MODEL" in text and "prior: reviewer severity SD" in text
    assert f"! harsh reviewer {HARSH}: P = >0.999 (q <0.001), -" in text
    assert "P(harsh) >0.999" in text and "position (vs the average slot): slot 0 +" in text
    assert "stable since (severity within 0.5 prior SD of where it ends): " in text
    markdown = cli("bias-report", "--method", "bayes", "--format", "markdown").stdout
    assert "## Hierarchical model (--method bayes)" in markdown and f"| {HARSH} | -" in markdown
    page = cli("bias-report", "--method", "bayes", "--format", "html").stdout
    assert "<h2>Hierarchical model</h2>" in page and "stable since session" in page
    chart = page[page.index("aria-label=\"each reviewer&#x27;s severity"):]
    chart = chart[:chart.index("</svg>")]
    assert chart.count("<polyline") == 4 and chart.count("<circle") == 4  # a line per reviewer, a dot where stable
    assert "HIERARCHICAL" not in cli("bias-report").stdout


def test_a_window_below_ten_sessions_has_no_hierarchical_part(tmp_path):
    records, _ = simulated(sessions=5, seed=1)
    small = Cli(tmp_path / "council.db")
    assert small("import", str(write_jsonl(tmp_path / "records.jsonl", records))).exit_code == 0
    assert "hierarchical" not in json.loads(small("bias-report", "--json", "--method", "bayes").stdout)


def test_an_unknown_method_is_one_usage_line(cli):
    result = cli("bias-report", "--method", "mcmc")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "'--method'" in result.output and "expected frequentist or bayes" in result.output


def test_the_python_api_gives_the_same_hierarchical_part(cli):
    import council_db

    report = council_db.connect(cli.db).report(method="bayes")
    from_cli = json.loads(cli("bias-report", "--json", "--method", "bayes").stdout)["hierarchical"]
    assert [r.severity.estimate for r in report.hierarchical.reviewers] == \
        [r["severity"]["estimate"] for r in from_cli["reviewers"]]


def test_the_hierarchical_part_is_the_same_on_sqlite_and_postgresql(tmp_path, pg_url):
    from tests.conftest import same_numbers

    records, _ = simulated(sessions=20, seed=5, reviewer_spread=0.5, verbosity=0.2)
    lines = str(write_jsonl(tmp_path / "records.jsonl", records))
    parts = []
    for url in (f"sqlite:///{tmp_path / 'council.db'}", pg_url):
        cli = Cli(url)
        assert cli("import", lines).exit_code == 0
        parts.append(json.loads(cli("bias-report", "--json", "--method", "bayes").stdout)["hierarchical"])
    assert parts[0]["reviewers"][0]["severity_path"]["sessions"][-1] == 20
    assert same_numbers(parts[0], parts[1], "hierarchical")


def test_a_reviewer_known_only_by_its_self_preference_is_listed():
    import numpy as np

    from council_db.analysis.loading.score_data import from_rows
    from council_db.report.hierarchical_section import hierarchical

    rng = np.random.default_rng(1)
    judges = ["a", "b", "c"]  # one judge a session, no slots, no lengths: only self-preference per judge
    rows = [(f"s{s:03d}", 1_000_000 * s, judges[s % 3], model, -1, -1, float(rng.integers(3, 9)))
            for s in range(30) for model in judges]
    part = hierarchical(from_rows(rows), "moderate")
    assert [r.reviewer_id for r in part.reviewers] == judges
    assert all(r.severity is None and r.self_preference is not None for r in part.reviewers)
