"""Human raters and gold labels are the reference, not judges to audit: every judge analysis
loads the judges' scores only, whatever command asks, and the report keeps the rest aside."""

from __future__ import annotations

import json

from council_db.analysis.loading.window import Window, load, load_for_report, load_sample
from council_db.ingest.importer import import_files
from tests.conftest import Cli, both_backends, simulated, write_jsonl

PEOPLE = dict(models=["a", "b", "c"], reviewers=["a", "b", "c"], humans=["h1", "h2"], gold="key",
              reference_share=0.5)


def stored(db, tmp_path, records) -> None:
    import_files(db, [str(write_jsonl(tmp_path / "in.jsonl", records))])


@both_backends
def test_every_loader_gives_the_judges_scores_and_the_report_keeps_the_reference_aside(db, tmp_path):
    records, _ = simulated(sessions=30, seed=2, **PEOPLE)
    stored(db, tmp_path, records)
    judges = sum(r["reviewer_id"] in ("a", "b", "c") for r in records)

    for data in (load(db, Window()), load_sample(db, Window()).data, load_for_report(db, Window()).data):
        assert data.reviewers == ["a", "b", "c"] and data.n_records == judges and data.n_sessions == 30
    whole = load_for_report(db, Window()).with_reference
    assert whole.reviewers == ["a", "b", "c", "h1", "h2", "key"] and whole.n_records == len(records)
    assert whole.kinds == {"h1": "human", "h2": "human", "key": "gold"}


def test_a_window_of_judges_alone_has_nothing_aside(db, tmp_path):
    records, _ = simulated(sessions=12, seed=2, models=["a", "b", "c"], reviewers=["a", "b", "c"])
    stored(db, tmp_path, records)
    loaded = load_for_report(db, Window())
    assert loaded.with_reference is None and loaded.data.kinds == {}


def test_leaderboard_and_trends_read_the_same_judges_with_or_without_people(tmp_path):
    records, _ = simulated(sessions=40, seed=4, **PEOPLE)
    outputs = []
    for name, kept in (("with", records), ("without", [r for r in records if r["reviewer_id"] in "abc"])):
        cli = Cli(tmp_path / f"{name}.db")
        assert cli("import", str(write_jsonl(tmp_path / f"{name}.jsonl", kept))).exit_code == 0
        board = json.loads(cli("leaderboard", "--format", "json").stdout)
        trends = cli("trends", "--format", "json")
        assert trends.exit_code == 0, trends.output
        outputs.append((board, json.loads(trends.stdout)))
    assert outputs[0] == outputs[1]
