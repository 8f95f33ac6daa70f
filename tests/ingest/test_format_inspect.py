"""council-db import --from inspect on Inspect's own test log (tests/data/inspect: a run of its
security_guide example graded by model_graded_fact; the README says what was kept) and on logs
made from it as Inspect lays them out (a second grader, epochs, partial credit, a grade the
grader's answer did not give, rubric and numeric scores, the same run as a .eval archive)."""

from __future__ import annotations

import copy
import json
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from council_db.contract.record import Record
from council_db.contract.reviewer_identity import Identity
from council_db.errors import CouncilDbError
from council_db.ingest.formats import inspect_document, inspect_files
from council_db.ingest.formats.inspect_log import Reader
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.sources import resolve_sources
from tests.conftest import Cli, run_module

LOG = Path(__file__).parents[1] / "data" / "inspect" / "security-guide.json"
TASK, MODEL = "security_guide", "openai/gpt-4o-mini"
PANELIST = "anthropic/claude-3-5-sonnet-latest"


def real_log() -> dict:
    return json.loads(LOG.read_text(encoding="utf-8"))


def write_json(path: Path, log: dict) -> Path:
    path.write_text(json.dumps(log, indent=2), encoding="utf-8")
    return path


def write_eval(path: Path, log: dict) -> Path:
    """The log as Inspect's EvalRecorder lays a .eval out: _journal/start.json first, each sample
    in samples/<id>_epoch_<epoch>.json, then the summaries and header.json."""
    header = {key: value for key, value in log.items() if key not in ("samples", "reductions")}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_journal/start.json", json.dumps({key: log[key] for key in ("version", "eval", "plan")},
                                                           indent=2))
        for sample in log["samples"]:
            archive.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", json.dumps(sample, indent=2))
        archive.writestr("_journal/summaries/1.json", json.dumps([{"id": s["id"], "epoch": s["epoch"]}
                                                                  for s in log["samples"]]))
        archive.writestr("header.json", json.dumps(header, indent=2))
    return path


def read(path: Path, **options) -> tuple[list[Record], list, int, Reader]:
    """What the reader makes of a log: its records, its rejections and its samples without a verdict."""
    reader = Reader(FormatOptions("inspect", **options), resolve_sources([str(path)])[0])
    records, rejected, silent = [], [], 0
    for batch in reader.batches():
        parsed = reader(batch)
        records += [record for _, record in parsed.records]
        rejected += parsed.rejected
        silent += parsed.no_verdict
    return records, rejected, silent, reader


def scorer_span(scorer: str, span: str, model: str, config: dict, time: str, score: dict) -> list[dict]:
    """A scorer's span in a sample's transcript: its model call and its score, as Inspect logs them."""
    return [{"span_id": span, "timestamp": time, "event": "span_begin", "id": span, "type": "scorer", "name": scorer},
            {"span_id": span, "timestamp": time, "event": "model", "model": model, "config": config},
            {"span_id": span, "timestamp": time, "event": "score", "score": score},
            {"span_id": span, "timestamp": time, "event": "span_end", "id": span}]


def panel_log() -> dict:
    """The real run graded by a second model too (a scorer with its own grader and sampling
    settings), over two epochs, with partial credit, one grade not found and a non-model scorer."""
    log = real_log()
    log["eval"]["scorers"].append({"name": "model_graded_qa", "options": {"model": PANELIST, "partial_credit": True}})
    values = {(1, 1): "C", (2, 1): "P", (3, 1): "I", (1, 2): "C", (2, 2): "I", (3, 2): None}
    samples = []
    for epoch in (1, 2):
        for original in log["samples"]:
            sample = copy.deepcopy(original)
            sample["epoch"] = epoch
            value = values[sample["id"], epoch]
            score = ({"value": "I", "explanation": "Grade not found in model output: I cannot say."} if value is None
                     else {"value": value, "explanation": f"GRADE: {value}"})
            sample["scores"]["model_graded_qa"] = score
            sample["scores"]["match"] = {"value": "I"}
            sample["events"] += scorer_span("model_graded_qa", f"qa{sample['id']}{epoch}", PANELIST,
                                            {"temperature": 0.0, "seed": 42}, f"2025-05-12T20:3{epoch}:00-04:00",
                                            score)
            samples.append(sample)
    log["samples"] = samples
    return log


def test_the_real_log_gives_one_record_per_sample_graded_by_the_model_in_its_scorer_span():
    records, rejected, silent, _ = read(LOG)

    assert (len(records), rejected, silent) == (3, [], 0)
    assert [r.session_id for r in records] == [f"{TASK}/1", f"{TASK}/2", f"{TASK}/3"]
    assert {(r.reviewer_id, r.model_id, r.score_value, r.score_scale, r.reviewer_prompt) for r in records} == {
        (MODEL, MODEL, 3.0, "1-3", "model_graded_fact")}
    answers = [sample["output"]["choices"][0]["message"]["content"] for sample in real_log()["samples"]]
    assert [r.response_length_chars for r in records] == [len(answer) for answer in answers]
    assert records[0].timestamp == "2025-05-12T20:28:33.125583-04:00"  # the score event's time
    assert {(r.reviewer_temperature, r.reviewer_seed, r.score_dimensions) for r in records} == {(None, None, None)}


def test_two_graders_of_a_sample_are_a_panel_in_its_session_and_epochs_are_repeated_gradings(tmp_path):
    records, rejected, silent, _ = read(write_json(tmp_path / "panel.json", panel_log()))

    assert (len(records), rejected, silent) == (12, [], 0)  # 3 samples x 2 epochs x 2 graders; match is no grader
    by_session: dict[str, set] = {}
    for record in records:
        by_session.setdefault(record.session_id, set()).add(record.reviewer_id)
    assert by_session == {f"{TASK}/{n}": {MODEL, PANELIST} for n in (1, 2, 3)}
    panel = [r for r in records if r.reviewer_id == PANELIST]
    assert [(r.session_id, r.score_value) for r in panel] == [
        (f"{TASK}/1", 3.0), (f"{TASK}/2", 2.0), (f"{TASK}/3", 1.0),  # C, P, I on 1-3
        (f"{TASK}/1", 3.0), (f"{TASK}/2", 1.0), (f"{TASK}/3", 0.0)]  # the grade not found: never scored, not I
    assert {(r.reviewer_prompt, r.reviewer_temperature, r.reviewer_seed) for r in panel} == {
        ("model_graded_qa", 0.0, 42)}
    keys = {(r.session_id, r.reviewer_id, r.model_id, r.position) for r in records}
    assert len(keys) == 12, "each epoch's grading is a record of its own"
    assert {r.position for r in records if r.session_id.endswith("/1")} == {r.position for r in records
                                                                           if r.session_id.endswith("/2")}


def test_a_grader_named_only_by_the_scorers_model_option_or_the_grader_role_is_found_without_events(tmp_path):
    log = panel_log()
    for sample in log["samples"]:
        sample.pop("events")
    log["eval"]["model_roles"] = {"grader": {"model": "google/gemini-2.0-flash", "config": {"temperature": 0.5}}}

    records, _, _, _ = read(write_json(tmp_path / "no-events.json", log))

    assert {(r.reviewer_id, r.reviewer_temperature) for r in records} == {
        ("google/gemini-2.0-flash", 0.5), (PANELIST, None)}  # model_graded_fact takes the grader role


def test_a_log_of_inspect_before_spans_marks_the_scorer_by_its_step_events(tmp_path):
    log = real_log()
    for sample in log["samples"]:
        for event in sample["events"]:
            event.pop("span_id")
            if event["event"] in ("span_begin", "span_end"):
                action = "begin" if event["event"] == "span_begin" else "end"
                event.update(event="step", action=action, type="scorer", name="model_graded_fact")
            elif event["event"] == "model":
                event.update(model="openai/gpt-4o", config={"temperature": 0.2})

    records, _, _, _ = read(write_json(tmp_path / "steps.json", log))

    assert {(r.reviewer_id, r.reviewer_temperature) for r in records} == {("openai/gpt-4o", 0.2)}


def test_a_score_voted_by_several_grader_models_is_one_verdict_of_their_panel(tmp_path):
    log = real_log()
    log["eval"]["scorers"][0]["options"] = {"model": ["openai/gpt-4o", "google/gemini-2.0-flash"]}
    with_events = copy.deepcopy(log["samples"][0])
    model_event = next(event for event in with_events["events"] if event["event"] == "model")
    with_events["events"].insert(2, dict(model_event, model="google/gemini-2.0-flash"))
    for sample in log["samples"][1:]:
        sample.pop("events")
    log["samples"][0] = with_events

    records, _, _, _ = read(write_json(tmp_path / "vote.json", log))

    assert [r.reviewer_id for r in records] == [f"{MODEL}+google/gemini-2.0-flash",
                                                "openai/gpt-4o+google/gemini-2.0-flash",
                                                "openai/gpt-4o+google/gemini-2.0-flash"]


def test_a_log_whose_scorers_call_no_model_says_so_and_gives_no_record(tmp_path):
    log = real_log()
    for sample in log["samples"]:
        sample["scores"] = {"match": {"value": "C"}, "includes": {"value": "I"}}
        sample.pop("events")
    log["eval"]["scorers"] = [{"name": "match"}, {"name": "includes"}]

    records, rejected, silent, reader = read(write_json(tmp_path / "match.json", log))

    assert (records, rejected, silent) == ([], [], 0)
    assert reader.warnings == ["no score of the first samples (up to 200) was given by a grader model (scorers "
                               "includes, match): only model-graded scores are imported (docs/import-formats.md, "
                               "inspect)"]


def test_a_json_log_and_the_eval_archive_of_the_same_run_give_the_same_records(tmp_path):
    log = panel_log()
    as_json, _, _, _ = read(write_json(tmp_path / "run.json", log))
    as_eval, rejected, _, _ = read(write_eval(tmp_path / "run.eval", log))

    assert rejected == [] and len(as_eval) == 12
    assert sorted(as_eval, key=repr) == sorted(as_json, key=repr)


@pytest.mark.parametrize("header", ["_journal/start.json", "start.json"])
def test_an_archive_still_being_written_or_of_an_older_inspect_is_read_by_the_header_it_has(tmp_path, header):
    full = write_eval(tmp_path / "full.eval", real_log())
    path = tmp_path / "partial.eval"
    with zipfile.ZipFile(full) as source, zipfile.ZipFile(path, "w") as archive:
        for name in source.namelist():
            if name.startswith("samples/") or name == "_journal/start.json":
                archive.writestr(header if name == "_journal/start.json" else name, source.read(name))

    records, rejected, _, _ = read(path)

    assert (len(records), rejected) == (3, []) and records == read(full)[0]


def test_rubric_scores_are_dimensions_and_numbers_keep_their_scale(tmp_path):
    log = real_log()
    log["samples"][0]["scores"]["model_graded_fact"]["value"] = {"accuracy": "C", "clarity": "P"}
    log["samples"][1]["scores"]["model_graded_fact"]["value"] = 7
    log["samples"][2]["scores"]["model_graded_fact"]["value"] = {"accuracy": 9, "clarity": 6}
    records, rejected, _, reader = read(write_json(tmp_path / "rubric.json", log))

    assert rejected == []
    assert [(r.score_value, r.score_scale, r.score_dimensions) for r in records] == [
        (2.5, "1-3", {"accuracy": 3.0, "clarity": 2.0}), (7.0, "1-10", None),
        (7.5, "1-10", {"accuracy": 9.0, "clarity": 6.0})]
    assert "so their scale is taken as 1-10" in reader.warnings[0]
    given, _, _, reader = read(tmp_path / "rubric.json", scale="0-10")
    assert [r.score_scale for r in given][1:] == ["0-10", "0-10"] and reader.warnings == []


def test_a_bad_sample_is_rejected_naming_its_field_and_line_and_the_others_are_kept(tmp_path):
    log = real_log()
    log["samples"][1]["scores"]["model_graded_fact"]["value"] = "maybe"
    path = write_json(tmp_path / "bad.json", log)
    start = path.read_text(encoding="utf-8").splitlines().index('      "id": 2,')  # 1-based: the { above it

    records, rejected, _, _ = read(path)

    assert [r.session_id for r in records] == [f"{TASK}/1", f"{TASK}/3"]
    assert [(r.line_number, r.field) for r in rejected] == [(start, "scores.model_graded_fact.value")]
    assert "no grade; expected C, P or I" in rejected[0].reason


@pytest.mark.parametrize("change, field, says", [
    (lambda sample: sample.update(id="q\u0000" + "1"), "session_id", "(the record's session_id is <eval.task>/<id>)"),
    (lambda sample: sample.update(id="q" * 600), "session_id", "got a string of 615 characters"),
    (lambda sample: sample["events"][1].update(model="judge\ud800"), None, "not valid JSON"),  # as any line
    (lambda sample: sample["events"][1].update(model="j" * 501), "reviewer_id", "(the record's reviewer_id is the "
                                                                              "grader model)"),
    (lambda sample: sample["events"][1].update(config={"temperature": 1e9}), "reviewer_temperature", "100"),
    (lambda sample: sample.update(epoch="one"), "epoch", "expected the epoch, a whole number"),
])
def test_a_value_no_record_can_hold_rejects_its_sample_naming_what_it_makes(tmp_path, change, field, says):
    log = real_log()
    change(log["samples"][0])
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(log, indent=2), encoding="utf-8", errors="surrogatepass")

    records, rejected, _, _ = read(path)

    assert [r.session_id for r in records] == [f"{TASK}/2", f"{TASK}/3"]
    assert [bad.field for bad in rejected] == [field] and says in rejected[0].reason, rejected[0].reason


def test_a_json_log_read_in_a_window_smaller_than_its_values_gives_the_same_records(tmp_path, monkeypatch):
    path = write_json(tmp_path / "panel.json", panel_log())
    whole, _, _, _ = read(path)
    monkeypatch.setattr(inspect_document, "CHUNK_CHARS", 100)  # every value runs past the window

    records, rejected, _, _ = read(path)

    assert rejected == [] and records == whole and len(records) == 12


def test_a_json_log_cut_short_keeps_the_samples_before_the_cut(tmp_path):
    path = write_json(tmp_path / "cut.json", real_log())
    text = path.read_text(encoding="utf-8")
    path.write_text(text[:text.index('"id": 3,') + 20], encoding="utf-8")

    records, rejected, _, _ = read(path)

    assert [r.session_id for r in records] == [f"{TASK}/1", f"{TASK}/2"]
    assert [(bad.line_number, bad.field) for bad in rejected] == [(text[:text.index('"id": 3,')].count("\n"), None)]


@pytest.mark.parametrize("word", ["NaN", "Infinity", "-Infinity"])
def test_a_score_inspect_writes_as_a_bare_word_that_is_no_json_is_a_grade_not_given(tmp_path, word):
    path = write_json(tmp_path / "nan.json", real_log())
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"value": "C"', f'"value": {word}', 1), encoding="utf-8")

    records, rejected, _, _ = read(path)

    assert rejected == [] and [r.score_value for r in records] == [0.0, 3.0, 3.0]


def test_a_sample_that_failed_before_scoring_or_a_grade_not_given_on_a_scale_holding_0_makes_no_record(tmp_path):
    log = real_log()
    log["samples"][0]["scores"] = None  # Inspect's sample that errored
    log["samples"][1]["scores"]["model_graded_fact"] = {"value": 0, "explanation": "Grade not found in model output"}
    log["samples"][2]["scores"]["model_graded_fact"]["value"] = 4

    records, rejected, silent, _ = read(write_json(tmp_path / "failed.json", log), scale="0-10")

    assert ([(r.session_id, r.score_value) for r in records], rejected, silent) == ([(f"{TASK}/3", 4.0)], [], 2)


@pytest.mark.parametrize("make, says", [
    (lambda path: path.write_bytes(b"PK\x03\x04" + b"\x00" * 200), "a damaged ZIP archive"),
    (lambda path: zipfile.ZipFile(path, "w").writestr("data.csv", "a,b\n1,2\n"), "a ZIP archive without header.json"),
])
def test_a_corrupt_archive_or_another_zip_is_refused_naming_the_file_and_nothing_is_stored(tmp_path, make, says):
    path = tmp_path / "run.eval"
    make(path)

    result = run_module("--db", str(tmp_path / "council.db"), "import", "--from", "inspect", str(path))

    stderr = result.stderr.decode()
    assert result.returncode == 1 and stderr.count("\n") == 1, stderr
    assert says in stderr and str(path) in stderr and "nothing was imported" in stderr
    assert not (tmp_path / "council.db").exists()


@pytest.mark.parametrize("name, content, says", [
    ("results.json", '{"evalId": "x", "results": {"version": 3}}', "a promptfoo results file: add --from promptfoo"),
    ("other.json", '{"evalId": "x", "samples": []}', "not an Inspect eval log: a .json log starts"),
    ("judgments.jsonl", '{"question_id": 81, "model": "m", "judge": ["gpt-4", "single-v1"], "score": 8, '
                        '"turn": 1, "tstamp": 1700000000}\n', "FastChat single-answer judgments: add --from "),
])
def test_a_file_of_another_kind_is_refused_naming_the_file_and_what_it_is(tmp_path, name, content, says):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")

    result = run_module("--db", str(tmp_path / "council.db"), "import", "--from", "inspect", str(path))

    stderr = result.stderr.decode()
    assert result.returncode == 1 and stderr.count("\n") == 1, stderr
    assert f"{path}: {says}" in stderr and "nothing was imported" in stderr
    assert not (tmp_path / "council.db").exists()


def test_a_json_log_whose_eval_is_no_inspect_spec_is_refused_when_read(tmp_path):
    path = write_json(tmp_path / "run.json", dict(real_log(), eval={"task": "t"}))
    with pytest.raises(CouncilDbError, match=r"run.json: its eval is not an Inspect eval spec \(Object missing "):
        read(path)


@pytest.mark.parametrize("name, write", [("run.json", write_json), ("run.eval", write_eval)])
def test_the_sniffer_names_an_inspect_log_given_without_from_inspect(tmp_path, name, write):
    path = write(tmp_path / name, real_log())
    result = Cli(tmp_path / "council.db")("import", str(path))

    assert str(result.exception) == f"{path}: a UK AISI Inspect eval log: add --from inspect; nothing was imported"


def test_a_log_imported_again_stores_nothing_twice_and_the_bias_report_reads_its_epochs_as_retests(tmp_path):
    log = panel_log()
    log["samples"] = [dict(copy.deepcopy(sample), id=sample["id"] + 3 * copy_number)
                      for copy_number in range(4) for sample in log["samples"]]  # 12 questions: enough for figures
    path = write_eval(tmp_path / "run.eval", log)
    cli = Cli(tmp_path / "council.db")

    first = json.loads(cli("import", "--from", "inspect", str(path), "--format", "json").stdout)
    again = json.loads(cli("import", "--from", "inspect", str(path), "--format", "json").stdout)
    report = json.loads(cli("bias-report", "--format", "json").stdout)

    assert (first["inserted"], first["excluded"], first["rejected"]) == (48, 4, 0)
    assert (again["inserted"], again["duplicates"], again["files"][0]["lines"]) == (0, 0, 0)  # not read again
    assert (report["window"]["sessions"], report["window"]["records"], report["excluded"]) == (12, 44, {"unscored": 4})
    retests = {row["reviewer_id"]: (row["pairs"], row["mean_abs_difference"]["estimate"])
               for row in report["self_consistency"]["reviewers"]}
    panelist = Identity(PANELIST, "model_graded_qa", 0, 42).label  # the grader's call config: who it was
    grader = Identity(MODEL, "model_graded_fact").label
    assert retests == {panelist: (8, 0.5), grader: (12, 0.0)}  # epoch 2 graded sample 2 I after P; 3 not at all


def test_stdin_is_refused_before_the_database_is_made(tmp_path):
    result = run_module("--db", str(tmp_path / "council.db"), "import", "--from", "inspect", "-",
                        input=LOG.read_bytes())

    assert result.returncode == 1 and "-: an Inspect eval log is read from its file" in result.stderr.decode()
    assert not (tmp_path / "council.db").exists()



def test_a_sample_entry_the_archive_cannot_give_back_is_rejected_and_the_others_are_kept(tmp_path):
    path = write_eval(tmp_path / "run.eval", real_log())
    with zipfile.ZipFile(path) as archive:
        entry = archive.getinfo("samples/2_epoch_1.json")
    data = bytearray(path.read_bytes())
    start = entry.header_offset + 30 + len(entry.filename.encode()) + len(entry.extra)
    data[start + entry.compress_size // 2] ^= 0xFF  # a flipped byte in the compressed sample
    path.write_bytes(bytes(data))

    records, rejected, _, _ = read(path)

    assert [r.session_id for r in records] == [f"{TASK}/1", f"{TASK}/3"]
    assert [r.line_number for r in rejected] == [2]
    assert "the archive's samples/2_epoch_1.json cannot be read" in rejected[0].reason


@pytest.mark.parametrize("write", [write_eval, write_json])
def test_a_log_is_read_one_batch_of_samples_at_a_time(tmp_path, monkeypatch, write):
    """A log is never held whole: 200 samples of 40 KB read in batches of 1 MB hold about one batch."""
    monkeypatch.setattr(inspect_files, "BATCH_BYTES", 1 << 20)
    log = real_log()
    template = log["samples"][0]
    template["metadata"] = {"padding": "x" * 40_000}
    log["samples"] = [dict(template, id=number) for number in range(1, 201)]
    path = write(tmp_path / f"big.{write.__name__[6:]}", log)
    reader = Reader(FormatOptions("inspect"), resolve_sources([str(path)])[0])

    tracemalloc.start()
    records = sum(len(reader(batch).records) for batch in reader.batches())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    assert records == 200
    assert peak < 8_000_000 / 2, f"{peak:,} bytes held reading 8 MB of samples"
