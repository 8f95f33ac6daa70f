"""Facets on reviewer, model and scale over council-db's record views, in a real Datasette on
127.0.0.1 with the plugin: counted from the day totals (and the index of excluded scores) to
the counts a GROUP BY over the records gives, with excluded scores of both kinds, two scales
and real judge data (MT-bench single grades and a Vicuna-80 review table). Facets or filters
the totals do not carry, and databases at an older schema, are Datasette's own to count."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.outlets.test_datasette import datasette
from tests.outlets.test_datasette_plugin import council, plugin_options
from tests.realdata import fastchat_import, mt_bench_import

TOTALS_SQL = "FROM pair_day_totals"  # what the plugin's counts read
RECORDS = """SELECT reviewer.name AS reviewer, candidate.name AS model, scale.name AS score_scale, sc.reviewer_id,
                    sc.model_id, sc.scale_id, sc.exclusion_id IS NOT NULL AS excluded, s.category
             FROM scores AS sc JOIN sessions AS s ON s.id = sc.session_id
             JOIN models AS reviewer ON reviewer.id = sc.reviewer_id
             JOIN models AS candidate ON candidate.id = sc.model_id JOIN scales AS scale ON scale.id = sc.scale_id"""


def on_two_scales(source: Path, target: Path) -> None:
    """The simulated sessions, every third one moved onto a 0-1 scale with two of its scores
    off that scale (excluded as out_of_scale, beside the simulator's unscored 0.0s)."""
    sessions: dict[str, int] = {}
    off_scale = 0
    with source.open() as lines, target.open("w") as out:
        for line in lines:
            record = json.loads(line)
            if sessions.setdefault(record["session_id"], len(sessions)) % 3 == 0:
                record["score_scale"], record["score_value"] = "0-1", round(record["score_value"] / 10, 3)
                if off_scale < 2 and record["score_value"] > 0:
                    record["score_value"], off_scale = 1.5, off_scale + 1
            out.write(json.dumps(record) + "\n")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Datasette serving a council-db store (simulated sessions on two scales, MT-bench, a
    Vicuna-80 table) and a copy of it downgraded to revision 0010, with query traces on."""
    folder = tmp_path_factory.mktemp("facets")
    store, older = folder / "store.db", folder / "older.db"
    council("simulate", "-o", str(folder / "sim.jsonl"), "--sessions", "60", "--unscored", "0.05", "--seed", "11")
    on_two_scales(folder / "sim.jsonl", folder / "two-scales.jsonl")
    council("--db", str(store), "import", str(folder / "two-scales.jsonl"))
    council("--db", str(store), *mt_bench_import())
    council("--db", str(store), *fastchat_import("others"))
    shutil.copy(store, older)
    council("--db", str(older), "db", "downgrade", "0010")
    with datasette(folder, str(store), str(older), *plugin_options(folder), "--setting", "trace_debug", "1") as client:
        yield client, store


def records(path: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(path) as connection:
        connection.row_factory = sqlite3.Row
        return [dict(row) for row in connection.execute(RECORDS)]


def expected(path: Path, relation: str, column: str, filters: dict[str, str]) -> list[tuple[Any, int]]:
    """(value, count) as Datasette orders a facet, counted here over the records."""
    counts = Counter(r[column] for r in records(path)
                     if not (relation == "within_session_scores" and r["excluded"])
                     and all(str(r[name.removesuffix("__exact")]) == value for name, value in filters.items()))
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def page(client: httpx.Client, database: str, relation: str, params: list[tuple[str, str]]) -> dict[str, Any]:
    response = client.get(f"/{database}/{relation}.json", params=[*params, ("_size", "1"), ("_trace", "1")])
    assert response.status_code == 200, response.text
    return response.json()


def facet(found: dict[str, Any], column: str) -> list[tuple[Any, int]]:
    return [(value["value"], value["count"]) for value in found["facet_results"][column]["results"]]


def traced(found: dict[str, Any]) -> str:
    return "\n".join(trace["sql"] for trace in found["_trace"]["traces"])


def a_reviewer_with_excluded_scores(path: Path) -> str:
    return next(r["reviewer"] for r in records(path) if r["excluded"])


CASES = [
    ("score_records", "reviewer", {}),
    ("score_records", "model", {}),
    ("score_records", "score_scale", {}),
    ("score_records", "model", {"reviewer": "<excluded>"}),
    ("score_records", "reviewer", {"score_scale__exact": "0-1"}),
    ("score_records", "reviewer", {"reviewer": "<excluded>", "score_scale": "1-10"}),
    ("within_session_scores", "reviewer", {}),
    ("within_session_scores", "score_scale", {"reviewer": "<excluded>"}),
    ("scores", "reviewer_id", {}),
    ("scores", "scale_id", {"reviewer_id": "1"}),
]


@pytest.mark.parametrize(("relation", "column", "filters"), CASES)
def test_a_facet_on_a_counted_column_is_summed_from_the_day_totals_to_the_records_counts(
        served, relation, column, filters):
    client, store = served
    filters = {name: a_reviewer_with_excluded_scores(store) if value == "<excluded>" else value
               for name, value in filters.items()}
    found = page(client, "store", relation, [("_facet", column), *filters.items()])

    assert facet(found, column) == expected(store, relation, column, filters)
    assert TOTALS_SQL in traced(found)
    assert f"select {column} as value, count(*)" not in traced(found)


def test_the_store_has_what_the_counts_must_get_right(served):
    """The cases above mean something: excluded scores of both kinds, on two scales, and more
    than one value for every counted column."""
    _, store = served
    rows = records(store)
    assert {r["score_scale"] for r in rows if r["excluded"]} == {"0-1", "1-10"}
    assert all(len({r[column] for r in rows}) > 1 for column in ("reviewer", "model", "score_scale"))


def test_a_selected_value_is_marked_and_its_link_clears_it(served):
    client, store = served
    reviewer = a_reviewer_with_excluded_scores(store)
    found = page(client, "store", "score_records", [("_facet", "reviewer"), ("reviewer", reviewer)])

    (value,) = found["facet_results"]["reviewer"]["results"]
    assert (value["value"], value["selected"]) == (reviewer, True)
    assert "reviewer=" not in value["toggle_url"] and "_facet=reviewer" in value["toggle_url"]


@pytest.mark.parametrize("params", [
    [("_facet", "reviewer"), ("category", "coding")],
    [("_facet", "reviewer"), ("reviewer__not", "gpt-4")],
    [("_facet", "category")],
])
def test_a_facet_or_filter_the_totals_do_not_carry_is_counted_by_datasette(served, params):
    client, store = served
    column = params[0][1]
    filters = dict(params[1:])
    found = page(client, "store", "score_records", params)

    if "reviewer__not" in filters:
        wanted = [(value, count) for value, count in expected(store, "score_records", column, {})
                  if value != filters["reviewer__not"]]
    else:
        wanted = expected(store, "score_records", column, filters)
    assert facet(found, column) == wanted
    assert f"select {column} as value, count(*) as count" in traced(found)


def test_a_database_at_an_older_schema_is_counted_by_datasette(served):
    client, store = served
    found = page(client, "older", "score_records", [("_facet", "reviewer")])

    assert facet(found, "reviewer") == expected(store, "score_records", "reviewer", {})
    assert TOTALS_SQL not in traced(found)
    assert "select reviewer as value, count(*) as count" in traced(found)


def test_counted_columns_are_suggested_from_the_totals_and_others_by_datasette(served):
    client, _ = served
    unfiltered = page(client, "store", "score_records", [])
    one_reviewer = page(client, "store", "score_records", [("reviewer", "gpt-4")])

    assert {"reviewer", "model", "score_scale", "category"} <= {s["name"] for s in unfiltered["suggested_facets"]}
    suggested = {s["name"] for s in one_reviewer["suggested_facets"]}
    assert "reviewer" not in suggested and "model" in suggested


@pytest.mark.parametrize("value", ["99999999999999999999999", "9223372036854775808", "\u0661"])
def test_an_id_filter_sqlite_cannot_hold_as_an_integer_is_counted_by_datasette_not_a_500(served, value):
    """Past SQLite's integers, or a digit that is not 0-9 (Python's int() reads Arabic-Indic
    digits): Datasette compares the text and finds no row; so does the facet, with or without
    _facet (the page suggests facets too)."""
    client, store = served

    found = page(client, "store", "scores", [("_facet", "scale_id"), ("reviewer_id", value)])
    suggesting = page(client, "store", "scores", [("reviewer_id", value)])

    assert found["rows"] == [] and suggesting["rows"] == []
    assert facet(found, "scale_id") == expected(store, "scores", "scale_id", {"reviewer_id": value}) == []
    assert TOTALS_SQL not in traced(found)
