"""council-db import --from promptfoo on promptfoo's own export fixture (tests/data/promptfoo,
MIT: its README says where it is from) and on a file written from promptfoo's documented result
format with what the real one lacks (a custom grader, named scores, factuality, select-best,
failed gradings): each model-graded assertion's grading is a record of the grading provider,
a file of another output version is refused before anything is stored, and the results list is
read one result at a time."""

from __future__ import annotations

import copy
import gzip
import itertools
import json
import random
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from council_db.errors import CouncilDbError
from council_db.ingest.formats import json_list
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.formats.promptfoo import Reader
from council_db.ingest.formats.promptfoo_grader import DEFAULT_GRADER
from council_db.ingest.importer import import_files
from council_db.ingest.lines import LineBatch
from council_db.ingest.sources import Source
from tests.conftest import both_backends, run_module, scalar

DATA = Path(__file__).parents[1] / "data" / "promptfoo"
SAMPLE = DATA / "sample-export.json"
CUSTOM = DATA / "custom-grader.json"
RUBRIC = {"type": "llm-rubric", "value": "Is polite"}


def result(test: int = 0, column: int = 0, provider: str = "openai:gpt-4o-mini", score: float | None = 0.75,
           assertion: dict | None = None, options: dict | None = None, **changes) -> dict:
    """One EvaluateResult as promptfoo writes it (src/types/index.ts), graded by one assertion."""
    component = {"pass": True, "reason": "ok", "assertion": assertion or RUBRIC}
    if score is not None:
        component["score"] = score
    return {"gradingResult": {"pass": True, "score": score, "reason": "ok", "componentResults": [component]},
            "id": f"r{test}-{column}", "latencyMs": 10, "namedScores": {},
            "prompt": {"raw": "Hi", "label": "greeting"}, "promptId": "p1", "promptIdx": column,
            "provider": {"id": provider, "label": ""}, "response": {"output": "Hello!"}, "score": score,
            "success": True, "testCase": {"vars": {"n": test}, "assert": [assertion or RUBRIC],
                                          "options": options or {}},
            "testIdx": test, "vars": {"n": test}, "failureReason": 0, **changes}


def document(results: list, version=3, default_test: dict | None = None) -> dict:
    """A results.json: the order promptfoo writes its members in, config after the results."""
    return {"evalId": "eval-test", "results": {"version": version, "timestamp": "2025-11-02T10:00:00.000Z",
                                               "prompts": [], "results": results, "stats": {}},
            "config": {"defaultTest": default_test or {}}, "shareableUrl": None, "metadata": {}}


def write(path: Path, data, indent: int | None = 2) -> Path:
    path.write_text(json.dumps(data, indent=indent), encoding="utf-8")
    return path


def read(path: Path, **options):
    """The reader's records (and its counts) for the whole file, as the import feeds it."""
    reader = Reader(FormatOptions("promptfoo", **options), Source(str(path), "file", path, path.stat().st_size))
    parsed = reader(LineBatch(1, path.read_bytes().split(b"\n"), 0))
    held = reader.end()
    return [record for _, record in parsed.records + held.records], parsed.rejected + held.rejected, parsed.no_verdict


def imported(db, *paths: Path, **options):
    return import_files(db, [str(path) for path in paths], options=FormatOptions("promptfoo", **options))


def rows(db, sql: str) -> list[tuple]:
    with db.reading() as reader:
        return [tuple(row) for row in reader.rows(sql, {})]


def test_the_minimal_file_docs_import_formats_shows_imports_as_shown(tmp_path):
    text = (Path(__file__).parents[2] / "docs" / "import-formats.md").read_text(encoding="utf-8")
    shown = text.split("## `promptfoo`", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]

    records, rejected, _ = read(write(tmp_path / "results.json", json.loads(shown)))

    assert rejected == [] and [(r.reviewer_id, r.model_id, r.score_dimensions) for r in records] == [
        ("openai:gpt-4.1", "openai:gpt-5-mini", {"tone": 0.9, "pass": 1.0})]


def test_the_real_export_gives_each_llm_rubric_grading_as_a_record_of_the_default_grader():
    records, rejected, silent = read(SAMPLE)

    assert (len(records), rejected, silent) == (4, [], 0)  # cost, latency and contains are no judge's
    sample = json.loads(SAMPLE.read_text(encoding="utf-8"))["results"]["results"]
    outputs = {(r["testIdx"], r["provider"]["id"]): len(r["response"]["output"]) for r in sample}
    sessions = {}
    for record in records:
        assert (record.reviewer_id, record.reviewer_prompt, record.score_value, record.score_scale) == (
            DEFAULT_GRADER, "llm-rubric", 1.0, "0-1")
        assert (record.timestamp, record.council_config_version) == ("2025-10-01T20:08:11.168Z",
                                                                     "Solve this riddle: {{riddle}}")
        assert record.score_dimensions == {"pass": 1.0} and record.schema_version == "1.0.0"
        sessions.setdefault(record.session_id, set()).add(record.model_id)
        assert record.response_length_chars in outputs.values()
    assert sorted(map(sorted, sessions.values())) == [["openai:gpt-5", "openai:gpt-5-mini"]] * 2
    assert all(key.startswith("promptfoo/v") and "/llm-rubric-" in key for key in sessions)


def test_the_written_file_keeps_custom_graders_their_settings_and_named_scores():
    records, rejected, silent = read(CUSTOM)

    assert (len(records), rejected, silent) == (9, [], 2)  # a component without a score; a result not graded
    by_type = {}
    for record in records:
        by_type.setdefault(record.session_id.rsplit("/", 1)[1].rsplit("-", 1)[0], []).append(record)
    rubric, factuality = by_type["llm-rubric"][:2], by_type["factuality"]
    assert {(r.reviewer_id, r.reviewer_temperature, r.reviewer_seed) for r in rubric} == {("openai:gpt-4.1", 0, 7)}
    assert all(r.reviewer_prompt.startswith("sha256:") and len(r.reviewer_prompt) == 19 for r in rubric)
    assert {r.model_id: r.score_dimensions for r in rubric} == {
        "openai:gpt-4o-mini": {"clarity": 0.9, "accuracy": 0.7, "pass": 1.0},
        "llama-local": {"clarity": 0.5, "accuracy": 0.3, "pass": 0.0}}
    assert {(r.reviewer_id, r.reviewer_temperature, r.reviewer_prompt) for r in factuality} == {
        ("anthropic:messages:claude-sonnet-4-5-20250929", 0.2, "factuality")}
    assert {r.model_id: r.score_value for r in by_type["select-best"]} == {"openai:gpt-4o-mini": 1.0,
                                                                            "llama-local": 0.0}
    assert {r.reviewer_id for r in by_type["select-best"] + by_type["model-graded-closedqa"]} == {"openai:o4-mini"}


@pytest.mark.parametrize("assertion, options, default_test, grader", [
    ({**RUBRIC, "provider": "openai:gpt-4.1"}, {"provider": "openai:o4-mini"},
     {"options": {"provider": "anthropic:claude"}}, "openai:gpt-4.1"),
    (RUBRIC, {"provider": {"id": "openai:o4-mini"}}, {"options": {"provider": "anthropic:claude"}}, "openai:o4-mini"),
    (RUBRIC, {}, {"options": {"provider": {"id": "anthropic:claude", "config": {"seed": 1}}}}, "anthropic:claude"),
    ({**RUBRIC, "provider": {"text": "ollama:llama3", "embedding": "ollama:nomic"}}, {}, {}, "ollama:llama3"),
    (RUBRIC, {}, {}, DEFAULT_GRADER),
], ids=["assertion", "test options", "config defaultTest", "a map by use", "promptfoo's default"])
def test_the_grader_is_the_assertions_else_the_tests_else_the_configs_default_else_promptfoos(
        tmp_path, assertion, options, default_test, grader):
    path = write(tmp_path / "results.json", document([result(assertion=assertion, options=options)],
                                                     default_test=default_test))

    records, rejected, _ = read(path)

    assert rejected == [] and [record.reviewer_id for record in records] == [grader]


@pytest.mark.parametrize("grading", [None, {"pass": False, "score": 0, "reason": "Error: grader timed out"}],
                         ids=["no gradingResult", "no componentResults"])
def test_a_result_whose_grading_failed_is_no_verdict_per_model_graded_assertion(tmp_path, grading):
    failed = result(1, gradingResult=grading, error="Error: grader timed out", failureReason=2)
    failed["testCase"]["assert"] = [RUBRIC, {"type": "factuality", "value": "x"}, {"type": "contains", "value": "y"}]
    path = write(tmp_path / "results.json", document([result(0), failed]))

    records, rejected, silent = read(path)

    assert (len(records), rejected, silent) == (1, [], 2)


def test_judge_names_the_default_grader_and_bench_the_sessions_and_a_stated_grader_wins(tmp_path):
    stated = {**RUBRIC, "value": "Is brief", "provider": "openai:gpt-4.1"}
    path = write(tmp_path / "results.json", document([result(), result(1, assertion=stated)]))

    records, _, _ = read(path, judge="anthropic:claude-sonnet-4-5", bench="my-evals")

    assert [record.reviewer_id for record in records] == ["anthropic:claude-sonnet-4-5", "openai:gpt-4.1"]
    assert all(record.session_id.startswith("my-evals/v") for record in records)


def test_two_prompts_of_one_provider_and_two_runs_of_an_eval_are_kept_apart_and_a_second_import_stores_nothing(
        db, tmp_path):
    first = write(tmp_path / "a.json", document([result(column=0), result(column=1)]))
    rerun = document([result(column=0)])
    rerun["evalId"] = "eval-again"
    again = write(tmp_path / "b.json", rerun)

    summaries = [imported(db, first), imported(db, first), imported(db, again)]

    assert [summary.total("inserted") for summary in summaries] == [2, 0, 1]
    assert scalar(db, "SELECT COUNT(DISTINCT session_id) FROM score_records") == 1


def test_a_bad_result_is_rejected_by_the_line_it_starts_on_naming_its_field_and_the_others_are_kept(db, tmp_path):
    results = [result(0), result(1), result(2), result(3, testIdx=-1), result(4)]
    results[1]["gradingResult"]["componentResults"][0]["score"] = "high"
    results[2]["provider"] = {"label": "no id"}
    path = write(tmp_path / "results.json", document(results))

    summary = imported(db, path)

    assert (summary.total("inserted"), summary.total("rejected")) == (2, 3)
    reasons = [reason for _, reason in rows(db, "SELECT line_number, reason FROM rejected_lines ORDER BY 1")]
    assert reasons[0].startswith("gradingResult.componentResults[0].score: got a str; expected the grader's score")
    assert reasons[1].startswith("provider.id: missing") and reasons[2].startswith("testIdx")
    assert not any("Is polite" in reason for reason in reasons)  # no text of the file


def test_a_grader_setting_no_record_can_hold_rejects_its_result_saying_where_it_comes_from(tmp_path):
    hot = {**RUBRIC, "provider": {"id": "openai:gpt-4.1", "config": {"temperature": 250}}}
    odd = {**RUBRIC, "provider": {"id": "openai:gpt-4.1", "config": {"seed": "seven"}}}
    path = write(tmp_path / "results.json", document([result(assertion=hot), result(1, assertion=odd)]))

    records, rejected, _ = read(path)

    assert records == [] and [bad.reason.split(":")[0] for bad in rejected] == [
        "reviewer_temperature", "gradingResult.componentResults[0].assertion.provider.config.seed"]
    assert "the grading provider's config.temperature" in rejected[0].reason


@pytest.mark.parametrize("data, says", [
    (document([result()], version=2), "line 4: results.version: is 2; this reads version 3"),
    ({"evalId": "e", "results": {"timestamp": "t", "results": [result()]}}, "results.version: missing"),
    ({"results": [result()], "table": {}}, "results: is a list, as promptfoo's output before version 3 has it"),
    ([result()], "not a JSON object"),
], ids=["version 2", "no version", "results a list", "a list"])
def test_a_results_file_of_another_version_or_shape_is_refused_naming_it_and_nothing_is_stored(
        db, tmp_path, data, says):
    path = write(tmp_path / "results.json", data)

    with pytest.raises(CouncilDbError) as refused:
        imported(db, path)

    assert says in str(refused.value) and str(refused.value).endswith("; nothing was imported")
    assert scalar(db, "SELECT COUNT(*) FROM imports") == 0


def test_the_command_refuses_a_version_2_file_and_stdin_in_one_line_with_exit_1(tmp_path):
    path = write(tmp_path / "results.json", document([result()], version=2))

    for args, stdin in (((str(path),), None), (("-",), SAMPLE.read_bytes())):
        ran = run_module("--db", str(tmp_path / "council.db"), "import", "--from", "promptfoo", *args, input=stdin)
        assert ran.returncode == 1 and len(ran.stderr.decode().strip().splitlines()) == 1, ran.stderr
    assert b"results.version: is 2" in run_module("--db", str(tmp_path / "council.db"), "import", "--from",
                                                  "promptfoo", str(path)).stderr


def test_a_gzipped_file_imports_as_the_plain_one_its_config_read_from_the_end_too(db, tmp_path):
    packed = tmp_path / "results.json.gz"
    packed.write_bytes(gzip.compress(CUSTOM.read_bytes()))

    summary = imported(db, packed)

    assert (summary.total("inserted"), summary.total("no_verdict")) == (9, 2)
    assert scalar(db, "SELECT COUNT(*) FROM score_records WHERE reviewer LIKE 'anthropic:%'") == 2


def test_a_file_on_one_line_reads_as_the_pretty_printed_one(tmp_path):
    one_line = write(tmp_path / "one.json", json.loads(CUSTOM.read_text(encoding="utf-8")), indent=None)

    assert [r.session_id for r in read(one_line)[0]] == [r.session_id for r in read(CUSTOM)[0]]


def test_the_reader_holds_one_result_at_a_time_not_the_file(tmp_path):
    answer = "x" * 10_000
    big = [result(n, response={"output": answer}, metadata={"notes": answer}) for n in range(400)]
    path = write(tmp_path / "results.json", document(big))
    lines = path.read_bytes().split(b"\n")
    reader = Reader(FormatOptions("promptfoo"), Source(str(path), "file", path, path.stat().st_size))
    batches = [LineBatch(first + 1, lines[first:first + 500], 0) for first in range(0, len(lines), 500)]

    tracemalloc.start()
    records = sum(len(reader(batch).records) for batch in batches)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    assert records == 400 and path.stat().st_size > 8_000_000
    assert peak < path.stat().st_size / 10, f"{peak:,} bytes held reading {path.stat().st_size:,}"


def test_the_config_is_found_at_the_end_past_a_nested_config_and_missing_is_a_warning(tmp_path):
    nested = document([result()], default_test={"options": {"provider": "anthropic:claude"}})
    nested["config"]["tests"] = [{"vars": {"config": {"defaultTest": {"options": {"provider": "wrong"}}}}}]
    without = copy.deepcopy(nested)
    del without["config"]

    assert [r.reviewer_id for r in read(write(tmp_path / "a.json", nested))[0]] == ["anthropic:claude"]
    reader = Reader(FormatOptions("promptfoo"), Source("b.json", "file", write(tmp_path / "b.json", without), 1))
    assert reader.warnings and "no config found" in reader.warnings[0]


def panel(tests: int, providers: tuple[str, ...], graders: tuple[str, ...]) -> dict:
    """An eval whose every answer is graded on one rubric by each of ``graders`` (a panel): the
    first provider's answers score higher, each grader 0.1 below the one before."""
    noise = random.Random(30)
    results = []
    for test in range(tests):
        for column, provider in enumerate(providers):
            graded = result(test, column, provider)
            graded["gradingResult"]["componentResults"] = [
                {"pass": True, "score": round(0.8 - 0.2 * column - 0.1 * number + noise.uniform(-0.05, 0.05), 3),
                 "reason": "ok", "assertion": {**RUBRIC, "provider": grader}}
                for number, grader in enumerate(graders)]
            results.append(graded)
    return document(results)


@both_backends
def test_an_import_of_the_fixtures_and_an_eval_of_a_grader_panel_gives_a_bias_report(cli, tmp_path):
    graders = ("openai:gpt-4.1", "anthropic:claude-sonnet-4-5")
    evaluated = write(tmp_path / "panel.json", panel(24, ("openai:gpt-4.1", "mistral:large", "ollama:llama3"),
                                                     graders))
    assert cli("import", "--from", "promptfoo", str(SAMPLE), str(CUSTOM), str(evaluated)).exit_code == 0

    ran = cli("bias-report", "--json", "--config-version", "greeting")

    assert ran.exit_code == 0, ran.output
    report = json.loads(ran.stdout)
    assert (report["window"]["sessions"], report["window"]["records"]) == (24, 24 * 3 * 2)
    labels = [f"{grader} · prompt llm-rubric" for grader in graders]  # each grader with its prompt
    assert {reviewer["reviewer_id"] for reviewer in report["reviewers"]} == set(labels)
    harsh = [flag["subject"] for flag in report["flags"] if flag["kind"] == "reviewer_severity"
             and flag["estimate"] < 0]
    assert harsh == [labels[1]]
    assert report["position"] is None  # no display slot: promptfoo grades one answer at a time


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab{}[]",\\ \t', max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet="k{[", max_size=2), inner,
                                                                  max_size=3),
    max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(elements=st.lists(JSON_VALUES, max_size=5), indent=st.sampled_from([None, 0, 2]),
       cut=st.integers(0, 400), damage=st.sampled_from([b"", b"}", b"]", b'"', b"{", b",,"]),
       sizes=st.lists(st.integers(1, 7), min_size=1, max_size=4))
def test_lines_read_in_bulk_give_what_lines_read_one_by_one_give(elements, indent, cut, damage, sizes):
    """ListElements.feed_lines (a batch's inner lines counted at once) against feed (each line
    token by token), on lists of any JSON, cut short or damaged anywhere, in batches of any size."""
    text = json.dumps(elements, indent=indent).encode()
    text = text[:cut] + damage + text[cut:]
    lines = text.split(b"\n")

    def found(bulk: bool) -> list:
        elements_read, out, start = json_list.ListElements("a list", nested=True), [], 0
        for size in itertools.cycle(sizes):
            if start >= len(lines):
                break
            batch = lines[start:start + size]
            out += (elements_read.feed_lines(start + 1, batch) if bulk else
                    [item for number, line in enumerate(batch, start + 1) for item in elements_read.feed(number, line)])
            start += size
        return [(line, str(item)) for line, item in out + list(elements_read.end())]

    assert found(bulk=True) == found(bulk=False)
