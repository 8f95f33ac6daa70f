"""The bias report's "Against the reference" section, end to end through the CLI: human raters
and gold labels are kept out of every judge analysis, each judge gets a ``reference`` object,
the report a top-level one, and on LLMBar's published runs the figures are the authors'."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from council_db.simulate import SimulationConfig
from council_db.simulate.implied import implied_agreement
from tests.conftest import Cli, simulated, write_jsonl

NATURAL = Path(__file__).parents[1] / "data" / "llmbar-natural"
RUNS = sorted(NATURAL.glob("evaluators/*/*/result.json"))
FIGURES = ("correct_False", "correct_True", "correct_both", "equal")
# Two candidates a session, three of five humans rating each; "twin" is planted like the humans.
PAIRWISE = dict(models=["a", "b", "c", "d"], reviewers=["judge", "twin", "noisy"], candidates_per_session=2,
                humans=["h1", "h2", "h3", "h4", "h5"], humans_per_session=3, answer_sd=1.0, noise_sd=0.5,
                reviewer_noise_sd={"noisy": 2.0, "judge": 0.3}, integer_scale=True)


def report(cli: Cli, *args: str) -> dict:
    result = cli("bias-report", "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def imported(tmp_path: Path, name: str, records: list[dict]) -> Cli:
    cli = Cli(tmp_path / f"{name}.db")
    result = cli("import", str(write_jsonl(tmp_path / f"{name}.jsonl", records)))
    assert result.exit_code == 0, result.output
    return cli


def judge_figures(found: dict) -> dict:
    """Everything the report says about the judges: all but the reference (and its flags), the
    time it was made and the note on the reference raters' scores. (Other flags' q-values could
    move with the family's size: here none is flagged either way.)"""
    out = {key: value for key, value in found.items() if key not in ("reference", "generated_at", "warnings")}
    out["flags"] = [f for f in found["flags"] if f["kind"] != "below_ceiling"]
    out["reviewers"] = [{k: v for k, v in r.items() if k != "reference"} for r in found["reviewers"]]
    out["warnings"] = [w for w in found["warnings"] if "reference raters" not in w]
    return out


def test_human_raters_leave_every_judge_figure_as_it_is_without_them(tmp_path):
    records, _ = simulated(sessions=60, seed=3, **PAIRWISE)
    people = {"h1", "h2", "h3", "h4", "h5"}
    with_people = report(imported(tmp_path, "with", records))
    without = report(imported(tmp_path, "without", [r for r in records if r["reviewer_id"] not in people]))

    assert judge_figures(with_people) == judge_figures(without)
    assert [r["reviewer_id"] for r in with_people["reviewers"]] == ["judge", "noisy", "twin"]
    assert all(r["reference"]["agreement"]["n_sessions"] > 0 for r in with_people["reviewers"])
    assert [f["subject"] for f in with_people["flags"] if f["kind"] == "below_ceiling"] == ["noisy"]
    assert with_people["reference"]["kind"] == "human" and with_people["reference"]["raters"] == sorted(people)
    assert without["reference"] is None and all(r["reference"] is None for r in without["reviewers"])


def run_name(path: Path) -> str:
    return f"{path.parent.parent.name}/{path.parent.name}"


def published(path: Path) -> dict[str, int]:
    """statistics.json's counts ("94 / 100 = 94.0%")."""
    statistics = json.loads((path.parent / "statistics.json").read_text(encoding="utf-8"))
    return {name: int(re.match(r"(\d+) / 100 = ", statistics[name])[1]) for name in FIGURES}


def as_llmbar_counts(gold: dict) -> dict[str, int]:
    """LLMBar's counts from the report's gold figures: LLMBar counts a missing verdict as wrong
    and no verdict in either order as the same verdict (``unjudged``)."""
    return {"correct_False": gold["accuracy_listed"]["count"], "correct_True": gold["accuracy_swapped"]["count"],
            "correct_both": gold["both_correct"]["count"],
            "equal": gold["same_verdict"]["count"] + gold["unjudged"]}


@pytest.fixture(scope="module")
def llmbar(tmp_path_factory) -> dict:
    cli = Cli(tmp_path_factory.mktemp("llmbar") / "council.db")
    result = cli("import", "--from", "llmbar", *map(str, RUNS))
    assert result.exit_code == 0, result.output
    return report(cli)


def test_the_llmbar_report_gives_for_every_judge_and_strategy_the_authors_statistics(llmbar):
    reviewers = {r["reviewer_id"]: r for r in llmbar["reviewers"]}
    assert sorted(reviewers) == sorted(run_name(path) for path in RUNS)
    for path in RUNS:
        gold = reviewers[run_name(path)]["reference"]["gold"]
        assert gold["labelled"] == 100
        assert as_llmbar_counts(gold) == published(path), run_name(path)
        listed = gold["accuracy_listed"]
        assert listed["estimate"] == pytest.approx(listed["count"] / listed["of"])
        assert listed["ci_low"] < listed["estimate"] < listed["ci_high"] and listed["n_sessions"] >= 98
        assert listed["confidence"] == "high"
    assert llmbar["reference"]["kind"] == "gold" and llmbar["reference"]["gold_pairs"] == 100
    assert set(llmbar["reference"]["gold_accuracy"]) == set(reviewers)


def test_the_llmbar_report_flags_nothing_about_the_gold_labels_and_gives_them_no_entry(llmbar):
    assert "gold" not in {r["reviewer_id"] for r in llmbar["reviewers"]}
    assert not [f for f in llmbar["flags"] if "gold" in f["subject"] or "gold" in f["message"]]
    assert llmbar["window"]["records"] == 3988  # the judges' records: the 200 gold labels are the reference


def test_the_agreement_ci_covers_the_planted_agreement_on_simulated_stores(tmp_path):
    truth = implied_agreement(SimulationConfig(sessions=10, seed=0, **PAIRWISE), sessions=40_000)
    covered = []
    for seed in range(4):
        records, _ = simulated(sessions=150, seed=100 + seed, **PAIRWISE)
        found = report(imported(tmp_path, f"s{seed}", records))
        for reviewer in found["reviewers"]:
            agreement = reviewer["reference"]["agreement"]
            covered.append(agreement["ci_low"] <= truth["judges"][reviewer["reviewer_id"]]["reference"]["agreement"]
                           <= agreement["ci_high"])
    # 12 intervals of 95%: 10 or more cover with probability 0.98 (binomial); coverage over many
    # data sets is benchmarks/bench_reference.py's.
    assert sum(covered) >= 10, covered


def test_every_format_shows_the_section_with_its_n_and_cis_and_the_text_fits_80_columns(tmp_path):
    records, _ = simulated(sessions=40, seed=5, **PAIRWISE)
    cli = imported(tmp_path, "shown", records)
    text = cli("bias-report").stdout
    section = text[text.index("AGAINST THE REFERENCE"):].split("\n\n")[0].splitlines()
    assert max(map(len, section)) <= 80
    assert any(line.startswith("raters among themselves: agreement") for line in section)
    for judge in ("judge", "noisy", "twin"):
        shown = section[section.index(f"  {judge} (pairwise sessions)") + 1]
        assert re.match(r"    S1 agreement \d\.\d\d \[\d\.\d\d, \d\.\d\d\], kappa .*, \d+ sessions$", shown), shown
    markdown = cli("bias-report", "--format", "markdown").stdout
    assert "## Against the reference" in markdown and "| judge | sessions of | agreement (S1) |" in markdown
    page = cli("bias-report", "--format", "html", "-o", str(tmp_path / "r.html"))
    assert page.exit_code == 0 and '<section id="reference"><h2>Against the reference</h2>' in \
        (tmp_path / "r.html").read_text(encoding="utf-8")


def test_sessions_left_out_as_anomalous_are_left_out_of_the_comparison_too(tmp_path):
    records, _ = simulated(sessions=60, seed=7, anomaly_rate=0.15, **PAIRWISE)  # people rate every session
    found = report(imported(tmp_path, "anomalous", records), "--exclude-anomalies")
    assert found["window"]["filters"]["exclude_anomalies"] > 0
    assert found["reference"]["sessions"] == found["window"]["sessions"] == 60 - found["window"]["filters"][
        "exclude_anomalies"]
