"""Repeat stability in every format of the bias report (issue 31): text within 80 columns,
Markdown, HTML and JSON show each judge's figures with their CIs and sessions, and a report
without repeats has none."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Cli, simulated, write_jsonl

SHAKY = "openai/gpt-4o"


@pytest.fixture(scope="module")
def cli(tmp_path_factory) -> Cli:
    tmp = tmp_path_factory.mktemp("stability")
    records, _ = simulated(sessions=30, seed=7, repeats=2, integer_scale=True, answer_sd=1.0, noise_sd=0.3,
                           reviewer_noise_sd={SHAKY: 2.0})
    cli = Cli(tmp / "council.db")
    assert cli("import", str(write_jsonl(tmp / "records.jsonl", records))).exit_code == 0
    return cli


def test_json_gives_each_judge_its_items_k_and_figures_with_ci_and_sessions(cli):
    stability = json.loads(cli("bias-report", "--format", "json").stdout)["self_consistency"]["stability"]

    assert stability["pass_threshold"] == 5.5 and len(stability["judges"]) == 4
    for judge in stability["judges"]:
        assert (judge["items"], judge["repeats"], judge["pass_k"]) == (30 * 4, {"2": 30 * 4}, 2)
        for key in ("identical", "within_one_point", "same_verdict", "within_item_sd", "reliability", "pass_hat_k",
                    "all_pass_given_any"):
            figure = judge[key]
            assert figure["ci_low"] <= figure["estimate"] <= figure["ci_high"], key
            assert (figure["n_sessions"], figure["n_records"], figure["confidence"]) == (30, 30 * 4 * 2, "moderate")
    shaky = next(j for j in stability["judges"] if j["reviewer_id"] == SHAKY)
    assert len(shaky["least_stable"]) == 5 and all(len(item["scores"]) == 2 for item in shaky["least_stable"])
    assert all(j["same_verdict"]["ci_low"] > shaky["same_verdict"]["ci_high"]
               for j in stability["judges"] if j is not shaky)


def test_text_markdown_and_html_show_the_section(cli):
    text = cli("bias-report").stdout
    markdown = cli("bias-report", "--format", "markdown").stdout
    page = cli("bias-report", "--format", "html").stdout

    assert "REPEAT STABILITY" in text and max(len(line) for line in text.splitlines()) <= 80
    assert f"  {SHAKY}  120 items scored again (k=2: 120), 30 sessions" in text
    assert "## Repeat stability" in markdown
    rows = [line for line in markdown.splitlines() if line.startswith(f"| {SHAKY} | 120 (k=2: 120) | 30 |")]
    assert len(rows) == 1 and rows[0].count("|") == 11, "one cell per figure: no '|' inside a label"
    assert "<h2>Repeat stability</h2>" in page and f"<td>{SHAKY}</td><td>120 (k=2: 120)</td>" in page


def test_a_report_without_repeats_has_no_stability(tmp_path):
    records, _ = simulated(sessions=20, seed=8)
    cli = Cli(tmp_path / "council.db")
    assert cli("import", str(write_jsonl(tmp_path / "records.jsonl", records))).exit_code == 0
    report = json.loads(cli("bias-report", "--format", "json").stdout)
    assert report["report_schema_version"] == "1.10.0"
    assert report["self_consistency"]["stability"] is None
    assert "REPEAT STABILITY" not in cli("bias-report").stdout
