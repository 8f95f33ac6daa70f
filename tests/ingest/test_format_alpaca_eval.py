"""council-db import --from alpaca-eval on AlpacaEval 2.0's published annotations
(tests/data/alpaca-eval, Apache-2.0: its README says what was taken and how the reference
figures were made with alpaca_eval's own code) and on entries written from the documented
format: each model's stored 0-1 scores average to AlpacaEval's raw win rate, a bad entry is
rejected by the line it starts on, and the list is read an entry at a time."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from council_db.ingest.formats import json_list
from council_db.ingest.formats.alpaca_eval import Reader
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from council_db.ingest.lines import LineBatch
from council_db.ingest.sources import Source
from tests.conftest import both_backends

DATA = Path(__file__).parents[1] / "data" / "alpaca-eval"
FILES = sorted(DATA.glob("*/*/annotations.json"))
REFERENCE = json.loads((DATA / "reference.json").read_text(encoding="utf-8"))
ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"


def entry(instruction: str = "Say hi.", preference: float | None = 2.0, **changes) -> dict:
    """One annotation as AlpacaEval writes it (annotators/pairwise_evaluator.py)."""
    return {"instruction": instruction, "output_1": "Hello there!", "generator_1": "gpt4_1106_preview",
            "dataset": "helpful_base", "output_2": "Hi!", "generator_2": "my-model", "annotator": ANNOTATOR,
            "preference": preference, "raw_completion": {"logprobs": {"content": [{"token": "m"}]}},
            "price_per_example": 0.01, "time_per_example": 0.15, **changes}


def write(path: Path, entries: list, indent: int | None = 2) -> Path:
    path.write_text(json.dumps(entries, indent=indent), encoding="utf-8")
    return path


def imported(db, *paths: Path, **options):
    return import_files(db, [str(path) for path in paths], options=FormatOptions("alpaca-eval", **options))


def rows(db, sql: str, **params) -> list[tuple]:
    with db.reading() as reader:
        return [tuple(row) for row in reader.rows(sql, params)]


@both_backends
def test_the_published_files_import_whole_and_each_models_mean_score_is_alpaca_evals_raw_win_rate(db):
    summary = imported(db, *FILES)

    assert summary.total("rejected") == 0 and summary.total("inserted") == 2 * (26 + 25)
    win_rates = dict(rows(db, "SELECT model, AVG(score_value) * 100 FROM score_records GROUP BY model"))
    for figures in REFERENCE["files"]:
        assert win_rates[figures["model"]] == pytest.approx(figures["win_rate"], abs=1e-9), figures["model"]
    assert rows(db, "SELECT COUNT(DISTINCT session_id), COUNT(DISTINCT reviewer) FROM score_records") == [(51, 1)]


def test_an_entry_is_a_session_of_the_baseline_and_the_model_scored_by_their_chance_of_being_preferred(db, tmp_path):
    """1 and 2 name the better output, 1.5 is a tie, a weighted annotator's value a probability;
    0 marks identical outputs, which alpaca_eval's metrics count as a tie; null is no verdict."""
    preferences = [1.0, 2.0, 1.5, 1.25, 0, None]
    path = write(tmp_path / "annotations.json",
                 [entry(f"Question {n}", preference) for n, preference in enumerate(preferences)])

    summary = imported(db, path)

    found = rows(db, "SELECT session_id, model, score_value, response_length_chars, position_is_display_order, "
                     "category, reviewer FROM score_records ORDER BY session_id, model")
    scores = {}
    for session, model, score, length, displayed, category, reviewer in found:
        scores.setdefault(session, {})[model] = score
        assert (displayed, category, reviewer) == (False, "helpful_base", ANNOTATOR)
        assert length == len("Hello there!" if model == "gpt4_1106_preview" else "Hi!")
    assert sorted((s["gpt4_1106_preview"], s["my-model"]) for s in scores.values()) == [
        (0.0, 1.0), (0.5, 0.5), (0.5, 0.5), (0.75, 0.25), (1.0, 0.0)]
    assert all(session.startswith("alpaca_eval/i") and session.endswith("/my-model") for session in scores)
    assert summary.files[0].no_verdict == 1 and summary.total("rejected") == 0


def test_every_annotator_of_a_models_answer_meets_in_one_session_and_every_model_has_its_own(db, tmp_path):
    first = write(tmp_path / "a.json", [entry("Q", 1.75), entry("Q", 1.25, generator_2="other")])
    second = write(tmp_path / "b.json", [entry("Q", 2.0, annotator="alpaca_eval_gpt4")])

    imported(db, first, second)

    sessions = rows(db, "SELECT session_id, COUNT(DISTINCT reviewer), COUNT(*) FROM score_records "
                        "GROUP BY session_id ORDER BY session_id")
    assert [(session.rsplit("/", 1)[1], reviewers, records) for session, reviewers, records in sessions] == [
        ("my-model", 2, 4), ("other", 1, 2)]


def test_a_bad_entry_is_rejected_by_the_line_it_starts_on_naming_its_field_and_the_others_are_kept(db, tmp_path):
    bad = [entry(preference=2.5), {k: v for k, v in entry().items() if k != "generator_2"}, entry(preference="2"),
           entry(generator_2="gpt4_1106_preview"), {k: v for k, v in entry().items() if k != "annotator"}, 3]
    path = tmp_path / "annotations.json"
    path.write_text("[\n" + ",\n".join(json.dumps(e) for e in [entry("first"), *bad, entry("last")]) + "\n]\n")

    summary = imported(db, path)

    reasons = {r.line_number: r.reason for r in summary.files[0].rejected_lines}
    assert reasons == {
        3: "preference: 2.5 is outside [1, 2]; expected 1 (output_1 better), 2 (output_2 better), 1.5 (a tie) or "
           "a weighted annotator's value between; 0 for identical outputs, null for no verdict",
        4: "generator_2: missing; expected the model's name (a non-empty string)",
        5: "preference: got a str; expected 1 (output_1 better) to 2 (output_2 better), 1.5 a tie, 0 identical "
           "outputs, or null",
        6: "generator_2: is generator_1 again (the baseline against itself): no comparison to store",
        7: "annotator: missing; give --judge NAME, the annotator that judged the file",
        8: "an entry that is not an object (a number); AlpacaEval's annotations.json lists objects",
    }
    assert summary.files[0].inserted == 4, "the first and the last entry"


def test_a_file_cut_short_keeps_the_entries_before_the_cut_and_rejects_the_one_it_cuts(db, tmp_path):
    whole = json.dumps([entry("one"), entry("two"), entry("three")], indent=2)
    path = tmp_path / "annotations.json"
    path.write_text(whole[:whole.index('"three"') + 20])

    summary = imported(db, path)

    (rejected,) = summary.files[0].rejected_lines
    assert rejected.reason == ("AlpacaEval's annotations.json ends inside the entry that starts here (cut short?); "
                               "the entries before it are kept")
    assert rejected.line_number == whole[:whole.index('"three"')].count("\n")
    assert summary.files[0].inserted == 4


A, B, C = (json.dumps(entry(question)) for question in "ABC")
STRUCTURE = {  # the file's lines -> (the line, what is said); the entries around are kept
    "no comma between two entries": ([f"[{A},", B, f"{C}]"], 3, "no comma before the entry that starts here"),
    "two commas": ([f"[{A},", ",", f"{C}]"], 2, "a comma where an entry is due (two commas, or one after [)"),
    "text after the list": ([f"[{A},", f"{C}]", "]"], 3, "text after the list's closing ]: AlpacaEval's "
                            "annotations.json is one JSON list"),
    "the list left open": ([f"[{A},", f"{C},"], 2, "AlpacaEval's annotations.json ends before the list's closing ] "
                           "(cut short?); the entries before it are kept"),
    "an entry that is no JSON": ([f"[{A},", '{"instruction": "x" "output_1": 1},', f"{C}]"], 2,
                                 "not valid JSON (expected `,` or `}` at byte 21); each line must be one JSON "
                                 "object"),
}


@pytest.mark.parametrize("case", sorted(STRUCTURE))
def test_a_list_whose_structure_breaks_says_where_and_keeps_the_entries_around_it(db, tmp_path, case):
    lines, number, says = STRUCTURE[case]
    (tmp_path / "annotations.json").write_text("\n".join(lines) + "\n")

    summary = imported(db, tmp_path / "annotations.json")

    assert [(r.line_number, r.reason) for r in summary.files[0].rejected_lines] == [(number, says)]
    assert summary.total("inserted") == (6 if case == "no comma between two entries" else 4)


def test_an_entry_too_large_to_hold_is_rejected_and_the_next_read(db, tmp_path, monkeypatch):
    monkeypatch.setattr(json_list, "ELEMENT_BYTES", 5_000)
    path = write(tmp_path / "annotations.json", [entry("big", output_2="x" * 6_000), entry("small")])

    summary = imported(db, path)

    assert [(r.line_number, r.reason) for r in summary.files[0].rejected_lines] == [
        (2, "an entry of more than 5,000 bytes, not held; an entry of AlpacaEval's annotations.json is a few KiB")]
    assert summary.total("inserted") == 2


@pytest.mark.parametrize("layout", ["one line", "JSON Lines"])
def test_a_list_on_one_line_and_json_lines_of_entries_read_the_same(db, tmp_path, layout):
    entries = [entry(f"Q{n}", 1 + n / 4) for n in range(5)]
    text = json.dumps(entries) if layout == "one line" else "".join(json.dumps(e) + "\n" for e in entries)
    (tmp_path / "in.json").write_text(text)

    summary = imported(db, tmp_path / "in.json")

    assert summary.total("rejected") == 0 and summary.total("inserted") == 10
    assert rows(db, "SELECT SUM(score_value) FROM score_records WHERE model = 'my-model'") == [(2.5,)]


def test_judge_and_bench_name_the_reviewer_and_the_sessions_and_an_import_again_stores_nothing(db, tmp_path):
    path = write(tmp_path / "annotations.json", [entry(annotator=None)])

    first = imported(db, path, judge="gpt-4-turbo", bench="ae2")
    again = imported(db, path, judge="gpt-4-turbo", bench="ae2")

    assert rows(db, "SELECT DISTINCT reviewer, session_id FROM score_records")[0][0] == "gpt-4-turbo"
    assert rows(db, "SELECT DISTINCT session_id FROM score_records")[0][0].startswith("ae2/i")
    assert (first.total("inserted"), again.total("inserted")) == (2, 0)


def test_the_reader_holds_one_entry_at_a_time_not_the_file():
    """llmbar's reader holds its whole document; this one an entry (and the batch it is given)."""
    answer = "x" * 10_000
    lines = json.dumps([entry(f"Q{n}", 1.5, output_1=answer, output_2=answer) for n in range(400)],
                       indent=2).encode().split(b"\n")
    document = sum(map(len, lines))
    reader = Reader(FormatOptions("alpaca-eval"), Source("in.json", "file", None, document))
    batches = [LineBatch(first + 1, lines[first:first + 500], 0) for first in range(0, len(lines), 500)]

    tracemalloc.start()
    records = sum(len(reader(batch).records) for batch in batches)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    assert records == 800 and document > 8_000_000
    assert peak < document / 10, f"{peak:,} bytes held reading a {document:,}-byte list"


def test_the_report_leaves_these_records_out_of_the_position_analysis_and_says_so(cli):
    """AlpacaEval shows the two answers in a random order it does not record: no display slot."""
    assert cli("import", "--from", "alpaca-eval", *map(str, FILES)).exit_code == 0

    report = json.loads(cli("bias-report", "--json").stdout)

    assert report["position"] is None
    assert any(warning.startswith("102 records left out of the position analysis") for warning in report["warnings"])
