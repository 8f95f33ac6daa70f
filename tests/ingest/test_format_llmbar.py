"""council-db import --from llmbar on LLMBar's published "Natural" runs (tests/data/llmbar-natural,
MIT: its README says what the files hold). For every judge and strategy the figures the authors'
statistics.json gives are derived from the raw result.json with plain Python, checked against
statistics.json, and found again in what the import stored: per-order accuracy against the gold
label, both orders correct, the same verdict in both orders."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from council_db.errors import CouncilDbError
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from council_db.store.database import open_database
from tests.conftest import both_backends, run_module

NATURAL = Path(__file__).parents[1] / "data" / "llmbar-natural"
RUNS = sorted(NATURAL.glob("evaluators/*/*/result.json"))
FIGURES = ("correct_False", "correct_True", "correct_both", "equal")


def run_name(path: Path) -> str:
    return f"{path.parent.parent.name}/{path.parent.name}"


def authors_figures(path: Path) -> dict[str, int]:
    """statistics.json's counts, as LLMEvaluator/evaluate.py makes them from each item's last
    stage: a verdict is correct when it is the label (no verdict is wrong), and two verdicts
    are equal when they are the same (no verdict in both orders is the same)."""
    counts = dict.fromkeys(FIGURES, 0)
    for item in json.loads(path.read_text(encoding="utf-8")):
        label, last = str(item["label"]), item["results"][-1]
        first, second = last["swap = False"]["winner"], last["swap = True"]["winner"]
        counts["correct_False"] += first == label
        counts["correct_True"] += second == label
        counts["correct_both"] += first == label and second == label
        counts["equal"] += first == second
    return counts


def published(path: Path) -> dict[str, int]:
    statistics = json.loads((path.parent / "statistics.json").read_text(encoding="utf-8"))
    return {name: int(re.match(r"(\d+) / 100 = ", statistics[name])[1]) for name in FIGURES}


@pytest.mark.parametrize("path", RUNS, ids=run_name)
def test_the_authors_figures_follow_from_each_runs_raw_file(path):
    assert authors_figures(path) == published(path)


def stored_verdicts(db) -> dict[str, dict[str, dict[bool, str | None]]]:
    """judge -> session -> {shown first: winner} for each order it gave a verdict in, read from
    the records alone: an order is output_1 or output_2 in display slot 0 (output_1 first is
    LLMBar's swap = False), its winner the candidate scored 1; and "gold" -> the label."""
    with db.reading() as reader:
        rows = reader.rows("SELECT session_id, reviewer, reviewer_kind, model, position, position_is_display_order, "
                           "score_value FROM score_records")
    slots: dict[tuple[str, str], dict[int, list[tuple[str, float]]]] = {}
    verdicts: dict[str, dict[str, dict]] = {}
    for session, reviewer, kind, model, position, displayed, score in rows:
        output = model.rsplit("/", 1)[1]
        if kind == "gold":
            assert not displayed, "a gold label was shown in no slot"
            if score == 1:
                verdicts.setdefault("gold", {})[session] = output
            continue
        slots.setdefault((reviewer, session), {}).setdefault(position, []).append((output, score))
    for (reviewer, session), by_slot in slots.items():
        assert sorted(by_slot) == [0, 1] and all(len(shown) == len(by_slot[0]) for shown in by_slot.values())
        orders = verdicts.setdefault(reviewer, {}).setdefault(session, {})
        for first, first_score in by_slot[0]:
            (second, second_score), = [(o, s) for o, s in by_slot[1] if o != first]
            assert {first_score, second_score} == {0.0, 1.0}, "one winner an order"
            orders[first == "output_1"] = first if first_score == 1 else second
    return verdicts


def stored_figures(verdicts: dict, judge: str) -> dict[str, int]:
    """The authors' figures from the stored verdicts, over the items the gold label holds."""
    counts = dict.fromkeys(FIGURES, 0)
    for session, label in verdicts["gold"].items():
        orders = verdicts.get(judge, {}).get(session, {})
        first, second = orders.get(True), orders.get(False)
        counts["correct_False"] += first == label
        counts["correct_True"] += second == label
        counts["correct_both"] += first == label and second == label
        counts["equal"] += first == second
    return counts


@pytest.fixture(scope="module")
def natural(tmp_path_factory):
    """Every run imported into one database: the items of every file meet in the same sessions."""
    db = open_database(f"sqlite:///{tmp_path_factory.mktemp('llmbar') / 'council.db'}", notify=lambda _: None)
    summary = import_files(db, [str(path) for path in RUNS], options=FormatOptions("llmbar"))
    yield db, summary
    db.engine.dispose()


def test_an_import_stores_for_every_judge_and_strategy_exactly_the_verdicts_the_authors_counted(natural):
    db, summary = natural
    verdicts = stored_verdicts(db)

    assert len(verdicts["gold"]) == 100
    assert sorted(set(verdicts) - {"gold"}) == sorted(run_name(path) for path in RUNS)
    for path in RUNS:
        assert stored_figures(verdicts, run_name(path)) == published(path), run_name(path)
    assert summary.total("rejected") == 0
    assert {f.held_bytes for f in summary.files} == {0}, "a document's last line (']' without newline) is final"


def test_a_judgment_without_a_winner_is_no_record_and_is_counted(natural):
    """PaLM2 wrote nothing on item 55 (and on item 58 in the Vanilla run): no verdict in either order."""
    db, summary = natural
    no_verdict = {run_name(Path(f.source)): f.no_verdict for f in summary.files if f.no_verdict}
    verdicts = stored_verdicts(db)

    assert no_verdict == {"PaLM2/Swap": 2, "PaLM2/Vanilla": 4}
    missing = {judge: sorted(int(session.split("/")[1].split("-")[0]) for session in verdicts["gold"]
                             if session not in verdicts[judge]) for judge in no_verdict}
    assert missing == {"PaLM2/Swap": [55], "PaLM2/Vanilla": [55, 58]}


def test_the_gold_label_is_one_gold_reviewer_stored_once_and_each_item_two_anonymous_candidates(natural):
    db, summary = natural
    with db.reading() as reader:
        kinds = dict(reader.rows("SELECT reviewer, kind FROM (SELECT DISTINCT reviewer, reviewer_kind AS kind "
                                 "FROM score_records) AS k"))
        gold = reader.rows("SELECT COUNT(*), COUNT(DISTINCT session_id) FROM score_records WHERE reviewer = 'gold'")[0]
        candidates = reader.rows("SELECT session_id, model, MIN(response_length_chars), MAX(response_length_chars) "
                                 "FROM score_records GROUP BY session_id, model")

    assert kinds.pop("gold") == "gold" and set(kinds.values()) == {"judge"}
    assert tuple(gold) == (200, 100)
    assert summary.files[1].duplicates == 200, "the second file's gold records are stored already"
    items = json.loads(RUNS[0].read_text(encoding="utf-8"))
    assert sorted((session, model) for session, model, *_ in candidates) == sorted(
        (session, f"{session}/output_{n}") for session in {row[0] for row in candidates} for n in (1, 2))
    lengths = {(int(s.split("/")[1].split("-")[0]), m.rsplit("_", 1)[1]): (low, high) for s, m, low, high in candidates}
    assert lengths == {(number, n): (len(item[f"output_{n}"]),) * 2
                       for number, item in enumerate(items, start=1) for n in ("1", "2")}


@both_backends
def test_an_item_is_one_session_with_the_judges_two_orders_in_swapped_slots(db, tmp_path):
    (path,) = [run for run in RUNS if run_name(run) == "GPT-4/Swap"]
    summary = import_files(db, [str(path)], options=FormatOptions("llmbar"))
    first = json.loads(path.read_text(encoding="utf-8"))[0]

    with db.reading() as reader:
        rows = reader.rows("SELECT session_id, model, position, score_value FROM score_records "
                           "WHERE reviewer = 'GPT-4/Swap' AND session_id LIKE 'llmbar-natural/1-%' ORDER BY 3, 2")
    assert summary.files[0].inserted == 600 and summary.files[0].no_verdict == 0
    (session,) = {row[0] for row in rows}
    assert first["results"][-1]["swap = False"]["winner"] == first["results"][-1]["swap = True"]["winner"] == "1"
    assert [tuple(row[1:]) for row in rows] == [(f"{session}/output_1", 0, 1.0), (f"{session}/output_2", 0, 0.0),
                                                (f"{session}/output_1", 1, 1.0), (f"{session}/output_2", 1, 0.0)]


def copy_run(tmp_path: Path, items: list | str, where: str = "bench/evaluators/Judge/Strategy") -> Path:
    folder = tmp_path / where
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "result.json"
    path.write_text(items if isinstance(items, str) else json.dumps(items, indent=2), encoding="utf-8")
    return path


def reviewers_and_sessions(db) -> tuple[set[str], set[str]]:
    with db.reading() as reader:
        rows = reader.rows("SELECT DISTINCT reviewer, session_id FROM score_records")
    return {row[0] for row in rows}, {row[1] for row in rows}


def test_judge_and_bench_name_the_judge_and_the_dataset_and_the_strategy_stays(db, tmp_path):
    items = json.loads(RUNS[0].read_text(encoding="utf-8"))[:2]
    import_files(db, [str(copy_run(tmp_path, items))], options=FormatOptions("llmbar", judge="gpt-4-0613",
                                                                             bench="natural"))

    reviewers, sessions = reviewers_and_sessions(db)
    assert reviewers == {"gold", "gpt-4-0613/Strategy"}
    assert {session.rsplit("-", 1)[0] for session in sessions} == {"natural/1", "natural/2"}


def test_a_file_outside_llmbars_layout_needs_judge_and_bench(db, tmp_path):
    items = json.loads(RUNS[0].read_text(encoding="utf-8"))[:1]
    path = copy_run(tmp_path, items, where="elsewhere")
    with pytest.raises(CouncilDbError, match="not in LLMBar's layout .* give --judge NAME .* and --bench NAME"):
        import_files(db, [str(path)], options=FormatOptions("llmbar"))

    import_files(db, [str(path)], options=FormatOptions("llmbar", judge="GPT-4/Swap", bench="mine"))
    assert reviewers_and_sessions(db)[0] == {"gold", "GPT-4/Swap"}


def test_a_bad_item_is_rejected_by_the_line_it_starts_on_and_the_others_are_kept(db, tmp_path):
    items = json.loads(RUNS[0].read_text(encoding="utf-8"))[:6]
    items[1]["label"] = 3
    del items[2]["output_2"]
    items[3]["results"][-1]["swap = True"]["winner"] = "tie"
    items[4]["results"] = []
    path = copy_run(tmp_path, items)
    starts = [number for number, line in enumerate(path.read_text().splitlines(), start=1) if line == "  {"]

    summary = import_files(db, [str(path)], options=FormatOptions("llmbar"))

    bad = {r.line_number: r.reason for r in summary.files[0].rejected_lines}
    assert list(bad) == starts[1:5]
    assert bad[starts[1]].startswith("label: not valid; expected 1 or 2")
    assert bad[starts[2]] == "output_2: missing; expected the second output, a string"
    assert bad[starts[3]].startswith('results: the last stage is not {"swap = False"')
    assert '(swap = True.winner: a winner is "1", "2" or null)' in bad[starts[3]]
    assert bad[starts[4]].startswith("results: is empty")
    assert "tie" not in " ".join(bad.values()), "no text of the file is quoted"
    assert len(reviewers_and_sessions(db)[1]) == 2, "items 1 and 6 are stored"


def test_a_document_cut_short_keeps_the_items_before_the_cut_and_names_its_line(db, tmp_path):
    whole = json.dumps(json.loads(RUNS[0].read_text(encoding="utf-8"))[:3], indent=2)
    cut = whole[:whole.index('"output_2"', whole.index('"input"', whole.index('"input"') + 1))]
    path = copy_run(tmp_path, cut)

    summary = import_files(db, [str(path)], options=FormatOptions("llmbar"))

    (bad,) = summary.files[0].rejected_lines
    second = [number for number, line in enumerate(cut.splitlines(), start=1) if line == "  {"][1]
    assert bad.line_number == second, "the item that is cut short"
    assert bad.reason.startswith(f"not valid JSON (Expecting property name enclosed in double quotes at line "
                                 f"{len(cut.splitlines())} column 5, in the item that starts here); the items "
                                 "after it cannot be read")
    assert len(reviewers_and_sessions(db)[1]) == 1
    assert summary.files[0].held_bytes == 0, "a document's last line is never held for later"


@pytest.mark.parametrize("text, line, reason", [
    ('{"input": "x"}', 1, "not a JSON list of items: is this LLMBar's result.json?"),
    ('[\n  {"input": "x"},\n  ', 2, "not valid JSON (Expecting value at line 3 column 3, in the item that starts"),
    ('[\n  {"input": "x"}\n  {"input": "y"}]', 3, "not valid JSON (expected , or ] after an item)"),
])
def test_a_document_that_is_no_list_of_items_is_one_rejected_line(db, tmp_path, text, line, reason):
    summary = import_files(db, [str(copy_run(tmp_path, text))], options=FormatOptions("llmbar"))

    rejected = summary.files[0].rejected_lines
    assert [(bad.line_number, bad.reason[:len(reason)]) for bad in rejected][-1] == (line, reason)


def test_importing_a_run_again_reads_nothing_and_a_changed_run_is_read_whole(db, tmp_path):
    items = json.loads(RUNS[0].read_text(encoding="utf-8"))[:3]
    path = copy_run(tmp_path, items)
    first = import_files(db, [str(path)], options=FormatOptions("llmbar")).files[0]
    again = import_files(db, [str(path)], options=FormatOptions("llmbar")).files[0]
    path.write_text(json.dumps(items + items[:1], indent=2)[:-1] + "\n]\n", encoding="utf-8")
    changed = import_files(db, [str(path)], options=FormatOptions("llmbar")).files[0]

    assert (first.inserted, again.lines, again.inserted) == (18, 0, 0)
    assert (changed.inserted, changed.duplicates) == (6, 18), "the fourth item holds the first's text: a new session"
    assert changed.mode == "full" and "reading it whole" in (changed.note or "")


def test_a_document_that_was_cut_short_when_imported_is_read_whole_once_complete(db, tmp_path):
    """Its start is unchanged, so a file of lines would be read on from where the last import
    stopped; but the item cut short began before that point, and a document is read whole."""
    whole = json.dumps(json.loads(RUNS[0].read_text(encoding="utf-8"))[:3], indent=2)
    path = copy_run(tmp_path, whole[:whole.index('"output_2"', whole.index('"input"', whole.index('"input"') + 1))])
    cut = import_files(db, [str(path)], options=FormatOptions("llmbar")).files[0]
    path.write_text(whole, encoding="utf-8")

    complete = import_files(db, [str(path)], options=FormatOptions("llmbar")).files[0]

    assert (cut.inserted, cut.rejected) == (6, 1)
    assert (complete.inserted, complete.duplicates, complete.rejected, complete.mode) == (12, 6, 0, "full")
    assert complete.note == "a JSON document that changed since its last import is read whole again"


def test_stdin_is_refused_with_the_reason(db):
    with pytest.raises(CouncilDbError, match="one JSON document: give its path"):
        import_files(db, ["-"], options=FormatOptions("llmbar", judge="j/s", bench="b"))


def test_a_file_outside_llmbars_layout_is_one_line_exit_1_and_creates_no_database(tmp_path):
    """The layout is checked with the other arguments, before the database is opened."""
    stray = tmp_path / "result.json"
    stray.write_bytes((RUNS[0]).read_bytes())
    done = run_module("--db", str(tmp_path / "c.db"), "import", "--from", "llmbar", str(stray))
    text = done.stderr.decode()
    assert done.returncode == 1 and text.count("\n") == 1 and "not in LLMBar's layout" in text, text
    assert not (tmp_path / "c.db").exists()
