"""council-db import --from openai-evals on logs written from OpenAI evals' documented format
(tests/data/openai-evals: its README says from which files). Expected records come from the
logs with plain Python, by classify.py's reading of them: the first completion fn is graded by
the last, each sample's metrics event holds the grader's choice and its score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from council_db.contract.record import Record
from council_db.ingest.formats.openai_evals import Reader
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from council_db.ingest.lines import LineBatch, Parsed
from council_db.ingest.sources import Source
from tests.conftest import Cli, run_module, scalar, write_jsonl

DATA = Path(__file__).parents[1] / "data" / "openai-evals"
LOGS = sorted(DATA.glob("*.jsonl"))
ARGS = {"eval_type": "cot_classify", "modelgraded_spec": "fact"}


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def spec_line(functions=("cand", "grader"), run_id="r1", args=None, cls="evals.elsuite.modelgraded.classify:"
              "ModelBasedClassify") -> dict:
    return {"spec": {"completion_fns": list(functions), "eval_name": "fact.dev.v0", "base_eval": "fact",
                     "split": "dev", "run_id": run_id, "created_at": "2024-05-02 10:15:00.318906",
                     "run_config": {"completion_fns": list(functions), "eval_spec": {
                         "cls": cls, "args": ARGS if args is None else args, "key": "fact.dev.v0"}}}}


def event(event_id: int, sample: int, kind: str, data: dict, run_id: str = "r1") -> dict:
    return {"run_id": run_id, "event_id": event_id, "sample_id": f"fact.dev.{sample}", "type": kind, "data": data,
            "created_by": "", "created_at": f"2024-05-02 10:15:{event_id:02d}.000000+00:00"}


def graded(first_id: int, sample: int, answer: str | None, choice: str, score: float | None) -> list[dict]:
    """A sample's events as classify.py records them: the answer's sampling (unless the sample
    held it), the grader's, the metrics."""
    events = [] if answer is None else [event(first_id, sample, "sampling", {"prompt": "q", "sampled": [answer]})]
    events.append(event(first_id + len(events), sample, "sampling", {"prompt": "grade", "sampled": ["...\nC"]}))
    events.append(event(first_id + len(events), sample, "metrics", {"choice": choice, "score": score}))
    return events


def read(path: Path, **options) -> Parsed:
    """The reader's output for the whole file, as the import gives it the lines."""
    reader = Reader(FormatOptions("openai-evals", **options), Source(str(path), "file", path, path.stat().st_size))
    return reader(LineBatch(1, path.read_bytes().splitlines(keepends=True), path.stat().st_size))


def expected(path: Path) -> tuple[dict[tuple, dict], int]:
    """(session, candidate, event_id) -> the record's fields, and the invalid choices: each
    metrics event of the log, its length the first of the sample's sampling events since its
    last grading when there are two (answer and grader) or more."""
    spec, *events = [line for line in lines(path) if "final_report" not in line]
    functions = spec["spec"]["completion_fns"]
    args = spec["spec"]["run_config"]["eval_spec"]["args"]
    found, invalid, sampled = {}, 0, {}
    for line in events:
        if line["type"] == "sampling":
            sampled.setdefault(line["sample_id"], []).append(len(line["data"]["sampled"][0]))
        elif line["type"] == "metrics":
            answers = sampled.pop(line["sample_id"], [])
            if line["data"]["choice"] == "__invalid__":
                invalid += 1
                continue
            found[(line["sample_id"], functions[0], line["event_id"])] = {
                "reviewer_id": functions[-1], "score_value": line["data"]["score"], "score_scale": "0-1",
                "response_length_chars": answers[0] if len(answers) >= 2 else None,
                "reviewer_prompt": f"{args['modelgraded_spec']}/{args['eval_type']}",
                "reviewer_temperature": args["eval_kwargs"]["temperature"],
                "reviewer_seed": args["eval_kwargs"]["seed"], "timestamp": line["created_at"]}
    return found, invalid


@pytest.mark.parametrize("path", LOGS, ids=[path.name for path in LOGS])
def test_each_grading_is_a_record_of_the_first_completion_fn_by_the_last_with_its_prompt(path):
    parsed = read(path)
    want, invalid = expected(path)
    by_key = {}
    for _, record in parsed.records:
        assert isinstance(record, Record) and record.schema_version == "1.0.0"
        key = next(key for key in want if key[:2] == (record.session_id, record.model_id)
                   and want[key]["timestamp"] == record.timestamp)
        by_key[key] = {field: getattr(record, field) for field in want[key]}
    assert by_key == want
    assert (parsed.rejected, parsed.no_verdict) == ([], invalid)
    assert len({record.position for _, record in parsed.records}) == len(want)


def test_the_fixture_holds_an_invalid_choice_and_an_answer_the_sample_held():
    """What the fixture is for: both cases classify.py writes besides a plain grading."""
    assert read(DATA / "ab-gpt-3.5-turbo.jsonl").no_verdict == 1
    assert [r.response_length_chars for _, r in read(DATA / "ab-gpt-4o-mini.jsonl").records].count(None) == 1


def test_the_logs_import_and_report_end_to_end_on_sqlite(tmp_path):
    cli = Cli(tmp_path / "council.db")
    result = cli("import", "--from", "openai-evals", *map(str, LOGS), "--format", "json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["inserted"], summary["rejected"], summary["no_verdict"]) == (11, 0, 1)
    assert "1 judgment without a verdict (no record)" in result.stderr
    stored = [json.loads(line) for line in cli("export").stdout.splitlines()]
    assert {(r["reviewer_id"], r["model_id"]) for r in stored} == {("gpt-4", "gpt-3.5-turbo"), ("gpt-4", "gpt-4o-mini")}
    assert len({r["session_id"] for r in stored}) == 6
    report = cli("bias-report")
    assert report.exit_code == 0, report.output
    assert "6 sessions" in report.stdout and "11 records · scale 0-1" in report.stdout


def test_one_completion_fn_grades_itself_and_a_sample_graded_twice_is_two_records(tmp_path):
    """classify.py makes the last completion fn the grader, so one fn grades its own answers;
    a sample graded again is a second record, told apart by its event."""
    path = write_jsonl(tmp_path / "self.jsonl", [
        spec_line(functions=("gpt-4o",)), *graded(0, 0, "Canberra.", "C", 1.0), *graded(3, 0, "Sydney.", "D", 0.0)])
    records = [record for _, record in read(path).records]
    assert [(r.session_id, r.reviewer_id, r.model_id, r.score_value, r.response_length_chars) for r in records] == [
        ("fact.dev.0", "gpt-4o", "gpt-4o", 1.0, 9), ("fact.dev.0", "gpt-4o", "gpt-4o", 0.0, 7)]
    assert records[0].position != records[1].position
    assert (records[0].reviewer_temperature, records[0].reviewer_seed) == (None, None)


def test_choices_without_a_score_and_number_choices_read_as_documented(tmp_path):
    path = write_jsonl(tmp_path / "log.jsonl", [
        spec_line(), *graded(0, 0, "a", "Y", None), *graded(3, 1, "b", "No", None), *graded(6, 2, "c", "4", 4.0),
        *graded(9, 3, "d", "A", None), *graded(12, 4, "e", "C", 1.5)])
    parsed = read(path)
    assert [(r.session_id, r.score_value, r.score_scale) for _, r in parsed.records] == [
        ("fact.dev.0", 1.0, "0-1"), ("fact.dev.1", 0.0, "0-1")]
    reasons = {bad.line_number: bad.reason for bad in parsed.rejected}
    assert reasons[10].startswith("data.score: 4.0 is the choice itself (choice_scores: from_strings) or off 0-1; give "
                                  "--scale LOW-HIGH")
    assert reasons[13].startswith("data.score: null, and the choice (1 characters) is none of Y, Yes, N, No")
    assert reasons[16].startswith("data.score: 1.5 is the choice itself")
    on_scale = read(path, scale="1-5")
    assert [(r.score_value, r.score_scale) for _, r in on_scale.records] == [(1.0, "1-5"), (0.0, "1-5"), (4.0, "1-5"),
                                                                              (1.5, "1-5")]


BAD = {
    "no type": (lambda e: e.pop("type"), "type: missing; expected an event's type"),
    "no sample": (lambda e: e.pop("sample_id"), "sample_id: missing; expected the sample's id"),
    "another run": (lambda e: e.update(run_id="r2"), "run_id: not the run_id of the spec line above it"),
    "no choice": (lambda e: e.update(data={"score": 1.0}), "data.choice: missing; expected the grader's choice"),
    "a score in words": (lambda e: e.update(data={"choice": "C", "score": "high"}),
                         "data.score: got a str; expected the choice's score, a number, or null"),
    "data no object": (lambda e: e.update(data=[1]), "data: not an object; expected the event's data, an object"),
    "no event id": (lambda e: e.pop("event_id"), "event_id: missing; expected the event's number in its run"),
    "a bad time": (lambda e: e.update(created_at="yesterday"), "created_at: a string of 9 characters that is not an "
                                                               "ISO-8601 time"),
}


def test_a_bad_event_line_is_rejected_naming_its_line_and_field_and_the_good_ones_are_kept(db, tmp_path):
    bad = []
    for number, (change, _) in enumerate(BAD.values()):
        line = event(100 + number, 10 + number, "metrics", {"choice": "C", "score": 1.0})
        change(line)
        bad.append(line)
    path = write_jsonl(tmp_path / "log.jsonl", [spec_line(), *graded(0, 0, "a", "C", 1.0), *bad, "{not json",
                                                *graded(3, 1, "b", "B", 0.75), {"final_report": {"score": 0.875}}])
    summary = import_files(db, [str(path)], options=FormatOptions("openai-evals"))
    assert summary.total("inserted") == 2
    reasons = {bad.line_number: bad.reason for bad in summary.files[0].rejected_lines}
    for number, (case, (_, says)) in enumerate(BAD.items(), start=5):
        assert reasons[number].startswith(says), (case, reasons[number])
    assert reasons[len(BAD) + 5].startswith("not valid JSON")
    assert scalar(db, "SELECT COUNT(*) FROM rejected_lines") == len(BAD) + 1
    assert scalar(db, "SELECT COUNT(*) FROM rejected_lines WHERE field = 'data.score'") == 1


@pytest.mark.parametrize("first, says", [
    (event(0, 0, "metrics", {"choice": "C", "score": 1.0}), 'line 1 is no spec line: an OpenAI evals log (oaieval '
                                                            '--record_path) starts with {"spec": ...}'),
    (spec_line(args={"samples_jsonl": "x.jsonl"}, cls="evals.elsuite.basic.match:Match"),
     "line 1: the eval fact.dev.v0 (evals.elsuite.basic.match:Match) is not model-graded"),
    (spec_line(functions=("a", "b", "c"), args={**ARGS, "multicomp_n": "from_models"}),
     "line 1: the eval fact.dev.v0 (evals.elsuite.modelgraded.classify:ModelBasedClassify) shows the grader several "
     "completions at once"),
    (spec_line(functions=()), "line 1: spec.completion_fns: not `array` of length >= 1; expected the completion fns"),
    ({"spec": {**spec_line()["spec"], "run_config": {"eval_spec": {"args": {"modelgraded_spec": 3}}}}},
     "line 1: spec.run_config.eval_spec.args.modelgraded_spec: got a int; expected the grading prompt's name"),
])
def test_a_log_that_does_not_start_with_a_model_graded_runs_spec_is_refused_and_nothing_stored(tmp_path, first,
                                                                                             says):
    path = write_jsonl(tmp_path / "log.jsonl", [first, event(1, 0, "match", {"correct": True}),
                                                *graded(2, 0, "a", "C", 1.0)])
    done = run_module("--db", str(tmp_path / "council.db"), "import", "--from", "openai-evals", str(path))
    stderr = done.stderr.decode()
    assert done.returncode == 1 and says in " ".join(stderr.split()), stderr
    assert "Traceback" not in stderr and stderr.count("\n") == 1
    assert not (tmp_path / "council.db").exists()


def test_a_spec_line_cut_off_by_the_sniffers_sample_is_refused_by_the_reader_storing_nothing(db, tmp_path):
    """The sniffer sees the first 64 KiB; a longer first line is judged when it is read."""
    huge = spec_line(args={"samples_jsonl": "x" * 70_000}, cls="evals.elsuite.basic.match:Match")
    path = write_jsonl(tmp_path / "log.jsonl", [huge, *graded(0, 0, "a", "C", 1.0)])
    with pytest.raises(Exception, match="line 1: the eval fact.dev.v0 .* is not model-graded"):
        import_files(db, [str(path)], options=FormatOptions("openai-evals"))
    assert scalar(db, "SELECT COUNT(*) FROM scores") == 0


@pytest.mark.parametrize("given", [(), ("--from", "fastchat-single"), ("--from", "arena-hard")])
def test_an_openai_evals_log_given_as_another_format_is_named(tmp_path, given):
    done = run_module("--db", str(tmp_path / "council.db"), "import", *given, str(LOGS[0]))
    stderr = done.stderr.decode()
    assert done.returncode == 1 and "an OpenAI evals log: add --from openai-evals; nothing was imported" in stderr
    assert not (tmp_path / "council.db").exists()


def test_another_formats_file_given_as_an_openai_evals_log_is_named(tmp_path):
    single = write_jsonl(tmp_path / "single.jsonl", [{"question_id": 81, "model": "m", "judge": ["gpt-4", "single-v1"],
                                                      "score": 8, "turn": 1, "tstamp": 1.7e9}])
    done = run_module("--db", str(tmp_path / "council.db"), "import", "--from", "openai-evals", str(single))
    assert done.returncode == 1
    assert "FastChat single-answer judgments: add --from fastchat-single" in done.stderr.decode()


def test_a_log_that_grew_is_read_whole_again_and_stores_each_grading_once(tmp_path):
    head, tail = [spec_line(), *graded(0, 0, "a", "C", 1.0)], graded(3, 1, "b", "B", 0.75)
    path = write_jsonl(tmp_path / "log.jsonl", head)
    cli = Cli(tmp_path / "council.db")
    assert json.loads(cli("import", "--from", "openai-evals", str(path), "--format", "json").stdout)["inserted"] == 1
    with path.open("a", encoding="utf-8") as out:
        out.write("".join(json.dumps(line) + "\n" for line in tail))
    grown = cli("import", "--from", "openai-evals", str(path), "--format", "json")
    summary = json.loads(grown.stdout)
    assert (summary["inserted"], summary["duplicates"]) == (1, 1)
    assert summary["files"][0]["note"] == "a run log that grew since its last import is read whole again"


def test_scale_is_refused_for_a_format_that_does_not_use_it(tmp_path):
    result = Cli(tmp_path / "council.db")("import", "--from", "arena-hard", "--scale", "1-5", str(LOGS[0]))
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert "--scale is for --from csv, jsonl, openai-evals or inspect, not arena-hard" in said


def test_a_large_log_is_read_in_order_by_one_worker_giving_what_this_process_gives(tmp_path, monkeypatch):
    """Read in this process, a run log took the writer's turn; a large one is read by one worker."""
    from council_db.ingest import pipeline
    from council_db.ingest.sources import resolve_sources

    events = [spec_line()] + [line for sample in range(19) for line in graded(3 * sample, sample, "a" * sample, "C",
                                                                             1.0)]
    events.insert(30, "{not json")
    path = write_jsonl(tmp_path / "log.jsonl", events)
    source = resolve_sources([str(path)])[0]

    def chunks_read(minimum: int) -> tuple[list, Reader]:
        monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", minimum)
        reader = Reader(FormatOptions("openai-evals"), source)
        read = list(pipeline.source_chunks(source, 0, 1, reader, in_order=True))
        return [(c.last_line, c.normalised.rows.session_keys, c.normalised.rows.score.tolist(),
                 c.normalised.rows.length.tolist(), [vars(r) for r in c.normalised.rejected]) for c in read], reader

    here, reader_here = chunks_read(10**9)
    in_worker, reader_in_worker = chunks_read(0)
    assert in_worker == here and here[-1][0] == len(events) and len(here[0][2]) == 19
    assert (reader_here.run is not None, reader_in_worker.run) == (True, None)  # the worker's copy read it


def test_a_spec_line_refused_by_the_worker_says_what_this_process_says(db, tmp_path, monkeypatch):
    from council_db.ingest import pipeline

    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 0)
    huge = spec_line(args={"samples_jsonl": "x" * 70_000}, cls="evals.elsuite.basic.match:Match")
    path = write_jsonl(tmp_path / "log.jsonl", [huge, *graded(0, 0, "a", "C", 1.0)])
    with pytest.raises(Exception, match="^[^ ]*log.jsonl: line 1: the eval fact.dev.v0 .* is not model-graded"):
        import_files(db, [str(path)], options=FormatOptions("openai-evals"))
    assert scalar(db, "SELECT COUNT(*) FROM scores") == 0
