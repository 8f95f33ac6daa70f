"""council-db check, the CI gate: a planted bias fails the rule that bounds it and clean data
passes; exit 0 / 1 / 2; text, JSON, JUnit XML and GitHub annotations; rules from options and
TOML; the same records give the same verdict however they were imported."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from council_db.errors import UsageError
from tests.conftest import Cli, run_module, same_numbers, simulated, write_jsonl

SESSIONS = 100
HARSH = "openai/gpt-4o"


class Gate(Cli):
    """The CLI on one store; a check that raised (a usage error) is never taken for a failed rule."""

    def __call__(self, *args: str, input: str | bytes | None = None):
        result = super().__call__(*args, input=input)
        if args[:1] == ("check",) and result.exit_code:
            assert isinstance(result.exception, SystemExit), (result.exception, result.output)
        return result


def _store(tmp: Path, name: str, **config) -> Gate:
    records, _ = simulated(sessions=SESSIONS, **config)
    cli = Gate(tmp / f"{name}.db")
    result = cli("import", str(write_jsonl(tmp / f"{name}.jsonl", records)))
    assert result.exit_code == 0, result.output
    return cli


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Gate:
    return _store(tmp_path_factory.mktemp("clean"), "clean", seed=11)


@pytest.fixture(scope="module")
def harsh(tmp_path_factory) -> Gate:
    """One reviewer a whole point harsher than the others: the judge upgrade CI should catch."""
    return _store(tmp_path_factory.mktemp("harsh"), "harsh", seed=12, reviewer_offsets={HARSH: -1.0})


def _swaps(tmp: Path, name: str, **config) -> Gate:
    return _store(tmp, name, seed=13, candidates_per_session=2, swap_orders=True, noise_sd=0.5, **config)


def test_clean_simulated_data_passes_every_default_and_bounded_rule(clean):
    result = clean("check", "--severity-max", "0.5", "--length-max", "0.5", "--min-tier", "high")

    assert result.exit_code == 0, result.output
    assert "FAIL" not in result.stdout
    assert result.stdout.count("PASS  severity-max") == 4
    assert "PASS  no-flags  all flags" not in result.stdout  # options given: no default rule added
    assert result.stdout.splitlines()[-1].startswith("passed: 6 passed, 0 failed")


def test_with_no_rule_given_the_gate_fails_on_no_report_flag_and_clean_data_has_none(clean):
    result = clean("check")

    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("PASS  no-flags  all flags: no flag at q <= 0.05")


def test_a_planted_severity_shift_fails_severity_max_for_that_reviewer_only(harsh):
    result = harsh("check", "--severity-max", "0.5", "--json")

    assert result.exit_code == 1, result.output
    failed = [r for r in json.loads(result.stdout)["results"] if r["status"] == "fail"]
    assert [r["subject"] for r in failed] == [HARSH]
    assert failed[0]["ci_high"] < -0.5 and failed[0]["n_sessions"] == SESSIONS


def test_no_flags_names_the_flag_and_its_kind_and_reviewer_filters_narrow_it(harsh):
    found = harsh("check", "--no-flags", "--flag-kind", "reviewer_severity", "--flag-reviewer", HARSH)
    assert found.exit_code == 1
    assert found.stdout.startswith(f"FAIL  no-flags  reviewer_severity: {HARSH}: harsh reviewer {HARSH}: -")
    assert found.stdout.count("FAIL  ") == 1  # the others' severity flags name other reviewers
    assert harsh("check", "--no-flags", "--flag-kind", "anomaly").exit_code == 0


def test_a_bound_inside_the_ci_fails_on_the_estimate_but_not_on_the_ci(harsh):
    figure = next(r for r in json.loads(harsh("check", "--severity-max", "0.1", "--json").stdout)["results"]
                  if r["subject"] == HARSH)
    between = str(-(figure["estimate"] + figure["ci_high"]) / 2)  # |estimate| > bound > |ci_high|

    assert harsh("check", "--severity-max", between).exit_code == 0
    assert harsh("check", "--severity-max", between, "--on", "estimate").exit_code == 1


def test_a_planted_slot_preference_fails_position_consistency_and_clean_swaps_pass(tmp_path):
    clean = _swaps(tmp_path, "clean")  # about 0.4: equal models, so which answer is better is chance
    biased = _swaps(tmp_path, "slots", position_effects=[1.5])

    assert clean("check", "--position-consistency-min", "0.2").exit_code == 0
    result = biased("check", "--position-consistency-min", "0.2")
    assert result.exit_code == 1, result.output
    assert result.stdout.count("FAIL  position-consistency-min") == 4


def test_a_rule_the_window_cannot_measure_is_skipped_saying_why_and_does_not_fail(clean):
    result = clean("check", "--agreement-min", "0.9", "--position-consistency-min", "0.9")

    assert result.exit_code == 0, result.output
    assert "SKIP  agreement-min  all judges: not measurable in this window: it holds no human" in result.stdout
    assert "SKIP  position-consistency-min  all reviewers: not measurable in this window" in result.stdout


def test_agreement_with_the_reference_is_judged_per_judge(tmp_path):
    rated = _store(tmp_path, "rated", seed=14, humans=["human/a", "human/b"])

    low = rated("check", "--agreement-min", "0.05", "--json")
    high = rated("check", "--agreement-min", "0.95", "--json")

    assert low.exit_code == 0 and high.exit_code == 1, (low.output, high.output)
    assert {r["subject"] for r in json.loads(high.stdout)["results"]} == {HARSH, "anthropic/claude-3-5-sonnet",
                                                                         "google/gemini-1.5-pro",
                                                                         "meta-llama/llama-3.1-70b"}


def test_junit_is_xml_with_one_testcase_per_rule_and_subject_and_the_failures_marked(harsh):
    result = harsh("check", "--severity-max", "0.5", "--min-sessions", "1000", "--format", "junit")

    assert result.exit_code == 1
    suite = ET.fromstring(result.stdout.split("?>", 1)[1]).find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == 5 and suite.get("failures") == "2"
    failures = {case.get("name"): case.find("failure").get("message") for case in cases
                if case.find("failure") is not None}
    assert set(failures) == {HARSH, "window"} and "100 sessions < 1,000" in failures["window"]


def test_an_output_file_named_xml_gets_junit(harsh, tmp_path):
    path = tmp_path / "check.xml"
    assert harsh("check", "--severity-max", "0.5", "-o", str(path)).exit_code == 1
    assert len(ET.parse(path).getroot().find("testsuite").findall("testcase")) == 4


def test_github_writes_error_annotations_and_appends_a_markdown_step_summary(harsh, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))

    result = harsh("check", "--severity-max", "0.5", "--format", "github")

    assert result.exit_code == 1
    errors = [line for line in result.stdout.splitlines() if line.startswith("::error ")]
    assert errors == [line for line in errors if f"title=council-db check severity-max%3A {HARSH}::" in line]
    assert len(errors) == 1 and "95%25 CI" in errors[0]
    written = summary.read_text()
    assert written.startswith("# earlier step\n## council-db check: FAILED: 3 passed, 1 failed")
    assert f"| ❌ fail | severity-max | {HARSH} |" in written


def test_json_says_the_verdict_the_rules_and_each_result(harsh):
    document = json.loads(harsh("check", "--severity-max", "0.5", "--min-tier", "moderate", "--json").stdout)

    assert document["check_schema_version"] == "1.0.0"
    assert (document["passed"], document["exit_code"], document["counts"]) == (False, 1, {"pass": 4, "fail": 1,
                                                                                            "skip": 0})
    assert document["rules"] == [{"rule": "severity-max", "limit": 0.5, "on": "ci"},
                                 {"rule": "min-tier", "limit": "moderate"}]
    assert document["window"]["sessions"] == SESSIONS
    assert set(document["results"][0]) == {"rule", "subject", "status", "message", "estimate", "ci_low", "ci_high",
                                           "n_sessions"}


def test_rules_come_from_council_db_toml_in_the_working_directory_and_options_replace_them(harsh, tmp_path,
                                                                                          monkeypatch):
    (tmp_path / "council-db.toml").write_text('[check]\nseverity-max = { bound = 0.5, on = "ci" }\n'
                                              'min-sessions = 10\n')
    monkeypatch.chdir(tmp_path)

    from_file = harsh("check")
    replaced = harsh("check", "--severity-max", "2")

    assert from_file.exit_code == 1, from_file.output
    assert f"FAIL  severity-max  {HARSH}" in from_file.stdout and "PASS  min-sessions" in from_file.stdout
    assert replaced.exit_code == 0, replaced.output
    assert "PASS  min-sessions  window: 100 sessions >= 10" in replaced.stdout


@pytest.mark.parametrize("toml, named", [
    ("[check]\nseverity-max = 0.5\nmin-sessoins = 3\n", "check.min-sessoins is not a rule: the rules are no-flags"),
    ("[check]\nagreement-min = { floor = 2 }\n", "check.agreement-min.floor is 2: give a share from 0 to 1"),
    ("[check]\nno-flags = { kinds = [\"severity\"] }\n", "check.no-flags.kinds names severity: the kinds are"),
    ("[check]\nmin-tier = { floor = \"high\", on = \"ci\" }\n", "check.min-tier.on is not a key of min-tier"),
    ("[check]\nseverity-max = \n", "is not TOML: Invalid value (at line 2, column"),
    ("[rules]\nseverity-max = 1\n", "has no [check] table: write the rules under [check]"),
])
def test_a_bad_rules_file_is_exit_2_with_one_line_naming_the_key_and_the_fix(clean, tmp_path, toml, named):
    rules = tmp_path / "rules.toml"
    rules.write_text(toml)

    result = run_module("--db", clean.db, "check", "--rules", str(rules))

    assert result.returncode == 2, result.stderr
    assert result.stderr.decode().count("\n") == 1 and named in result.stderr.decode()
    assert result.stderr.decode().startswith(f"error: {rules}")


def test_a_bad_option_value_is_exit_2_naming_the_option(clean):
    result = run_module("--db", clean.db, "check", "--alpha", "0.2", "--no-flags")

    assert result.returncode == 2
    assert result.stderr.decode() == ("error: --alpha is 0.2: give a q-value above 0 and at most 0.05 (the report "
                                      "flags at q <= 0.05)\n")


def test_an_empty_window_is_exit_2_with_the_windows_own_message(clean):
    result = Cli(clean.db)("check", "--since", "2100-01-01")  # Cli: it raises

    assert isinstance(result.exception, UsageError) and result.exception.exit_code == 2
    assert "no session in this window, but the database holds 100 sessions" in str(result.exception)
    assert "try --since" in str(result.exception)


def test_the_same_records_give_the_same_verdict_imported_twice_in_another_order_or_on_postgresql(tmp_path, pg_url):
    records, _ = simulated(sessions=40, seed=15, reviewer_offsets={HARSH: -0.8})
    half = len(records) // 2
    parts = {name: write_jsonl(tmp_path / f"{name}.jsonl", part)
             for name, part in (("all", records), ("b", records[half:]), ("a", records[:half]))}
    stores = {Gate(tmp_path / "once.db"): ["all"], Gate(tmp_path / "twice.db"): ["b", "a", "b"],
              Gate(pg_url): ["a", "b"]}
    args = ("check", "--no-flags", "--severity-max", "0.3", "--length-max", "0.5", "--json",
            "--sample-sessions", "20")  # half the window: the sample is drawn too
    verdicts = []
    for cli, names in stores.items():
        for name in names:
            assert cli("import", "-q", str(parts[name])).exit_code == 0
        result = cli(*args)
        verdicts.append((result.exit_code, json.loads(result.stdout)["results"]))

    assert verdicts[0][0] == 1
    assert verdicts[1] == verdicts[0] and same_numbers(list(verdicts[2]), list(verdicts[0]))


def test_a_reviewer_id_with_control_characters_stays_valid_xml_and_one_annotation_line(tmp_path):
    odd = "evil/\x1b[31mjudge\x07"
    cli = _store(tmp_path, "odd", seed=16, reviewers=[odd, HARSH], reviewer_offsets={odd: -1.5})

    junit = cli("check", "--severity-max", "0.5", "--format", "junit")
    github = cli("check", "--severity-max", "0.5", "--format", "github")

    names = [case.get("name") for case in ET.fromstring(junit.stdout.split("?>", 1)[1]).iter("testcase")]
    assert "evil/\\x1b[31mjudge\\x07" in names
    assert "\x1b" not in github.stdout and "\x07" not in github.stdout
    assert sum(line.startswith("::error ") for line in github.stdout.splitlines()) == 2


def test_a_judge_upgrade_at_a_known_date_fails_severity_on_each_side_with_its_sign_and_no_flags_dates_it(tmp_path):
    """A step of -1.5 points in one reviewer's severity halfway through 90 days (the simulator
    centres it: +0.75 before, -0.75 after, against the others)."""
    from datetime import datetime, timedelta, timezone

    end = datetime(2026, 6, 1, tzinfo=timezone.utc)
    upgrade = (end - timedelta(days=45)).isoformat()
    cli = _store(tmp_path, "upgrade", seed=17, end=end, days=90, drift={HARSH: -1.5}, drift_at=0.5)

    after = cli("check", "--since", upgrade, "--severity-max", "0.25", "--json")
    before = cli("check", "--until", upgrade, "--severity-max", "0.25", "--json")
    whole = cli("check", "--no-flags", "--flag-kind", "change_point")

    assert after.exit_code == 1 and before.exit_code == 1, (after.output, before.output)
    signs = {name: [(r["subject"], r["estimate"] > 0) for r in json.loads(found.stdout)["results"]
                    if r["status"] == "fail"] for name, found in (("after", after), ("before", before))}
    assert signs == {"after": [(HARSH, False)], "before": [(HARSH, True)]}
    assert whole.exit_code == 1 and f"FAIL  no-flags  change_point: reviewer {HARSH}" in whole.stdout


def test_retest_max_fails_the_reviewer_whose_repeated_scores_of_one_answer_drift_apart(tmp_path):
    """Each answer scored twice; one reviewer's second score is off by about 2 points (a judge
    sampled hot), the others' by about 0.1: repeat stability fails that reviewer alone."""
    records, _ = simulated(sessions=60, seed=21)
    rng = np.random.default_rng(21)
    again = [dict(line, position=line["position"] + 10, score_value=float(np.clip(
        line["score_value"] + rng.normal(0, 2.5 if line["reviewer_id"] == HARSH else 0.1), 1, 10)))
        for line in records]
    cli = Gate(tmp_path / "retest.db")
    assert cli("import", str(write_jsonl(tmp_path / "retest.jsonl", records + again))).exit_code == 0

    result = cli("check", "--retest-max", "1", "--format", "json")

    outcomes = {o["subject"]: o for o in json.loads(result.stdout)["results"]}
    assert result.exit_code == 1
    assert [s for s, o in outcomes.items() if o["status"] == "fail"] == [HARSH]
    assert outcomes[HARSH]["ci_low"] > 1 and all(o["ci_high"] < 1 for s, o in outcomes.items() if s != HARSH)


def test_retest_max_is_skipped_where_no_answer_was_scored_twice(clean):
    result = clean("check", "--retest-max", "1")
    assert result.exit_code == 0 and "SKIP  retest-max" in result.stdout


def test_dimension_judges_the_rules_on_one_rubric_dimensions_scores(tmp_path):
    records, _ = simulated(sessions=SESSIONS, seed=22, dimensions=["accuracy", "clarity"],
                           dimension_reviewer_offsets={"clarity": {HARSH: -1.5}})
    cli = Gate(tmp_path / "rubric.db")
    assert cli("import", str(write_jsonl(tmp_path / "rubric.jsonl", records))).exit_code == 0

    overall = cli("check", "--severity-max", "0.5")
    clarity = cli("check", "--severity-max", "0.5", "--dimension", "clarity")

    assert overall.exit_code == 0, overall.stdout
    assert clarity.exit_code == 1 and f"FAIL  severity-max  {HARSH}" in clarity.stdout
    unknown = Cli(cli.db)("check", "--dimension", "tone").exception  # Cli: it raises
    assert isinstance(unknown, UsageError) and unknown.exit_code == 2 and "accuracy (1,600 scores)" in str(unknown)


def test_text_fits_the_terminals_80_columns_and_stays_one_line_a_result_in_a_file(harsh, tmp_path, monkeypatch):
    path = tmp_path / "check.txt"
    assert harsh("check", "--severity-max", "0.5", "-o", str(path)).exit_code == 1
    whole = path.read_text().splitlines()
    monkeypatch.setenv("COLUMNS", "80")

    on_terminal = harsh("check", "--severity-max", "0.5").stdout.splitlines()

    assert max(map(len, whole)) > 80 and len(whole) == 5  # four reviewers and the verdict
    assert max(map(len, on_terminal)) <= 80 and " ".join(on_terminal).split() == " ".join(whole).split()


@pytest.fixture(scope="module")
def repeated(tmp_path_factory) -> Gate:
    """Each answer scored 3 times (simulate --repeats): HARSH with noise SD 1.5, the others 0.4."""
    return _store(tmp_path_factory.mktemp("repeated"), "repeated", seed=31, repeats=3, base_score=5.5,
                  answer_sd=1.0, noise_sd=0.4, reviewer_noise_sd={HARSH: 1.5})


def test_stability_min_fails_the_judge_whose_repeats_disagree_on_the_verdict_and_retest_max_still_works(repeated):
    result = repeated("check", "--stability-min", "0.6", "--retest-max", "1", "--format", "json")

    document = json.loads(result.stdout)
    stability = {o["subject"]: o for o in document["results"] if o["rule"] == "stability-min"}
    retest = {o["subject"]: o["status"] for o in document["results"] if o["rule"] == "retest-max"}
    assert result.exit_code == 1 and {"rule": "stability-min", "limit": 0.6, "on": "ci"} in document["rules"]
    assert [s for s, o in stability.items() if o["status"] == "fail"] == [HARSH] == \
        [s for s, status in retest.items() if status == "fail"]
    assert stability[HARSH]["ci_high"] < 0.6 and all(o["ci_low"] >= 0.6 for s, o in stability.items() if s != HARSH)
    assert all(o["n_sessions"] == SESSIONS for o in stability.values())


def test_stability_min_from_the_rules_file_in_junit_and_github_annotations(repeated, tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text('[check]\nstability-min = { floor = 0.6, on = "estimate" }\n')

    junit = repeated("check", "--rules", str(rules), "--format", "junit")
    github = repeated("check", "--rules", str(rules), "--format", "github")

    cases = ET.fromstring(junit.stdout.split("?>", 1)[1]).find("testsuite").findall("testcase")
    assert junit.exit_code == github.exit_code == 1
    assert [c.get("name") for c in cases if c.find("failure") is not None] == [HARSH]
    assert "estimate < 0.6" in cases[[c.get("name") for c in cases].index(HARSH)].find("failure").get("message")
    assert f"title=council-db check stability-min%3A {HARSH}::" in github.stdout


def test_stability_min_is_skipped_where_no_answer_was_scored_twice_and_a_floor_above_1_is_exit_2(clean):
    skipped = clean("check", "--stability-min", "0.5")
    bad = run_module("--db", clean.db, "check", "--stability-min", "1.5")

    assert skipped.exit_code == 0 and "SKIP  stability-min  all reviewers: not measurable" in skipped.stdout
    assert skipped.stdout.count("not measurable") == 1  # the report's note is not said twice
    assert bad.returncode == 2 and bad.stderr.decode() == "error: --stability-min is 1.5: give a share from 0 to 1\n"
