"""Data is never read as Markdown: a model id with a |, a link or underscores keeps the report's
tables whole and renders as the text it is."""

from __future__ import annotations

import re

from council_db.analysis.loading.score_data import from_records
from council_db.report import render
from council_db.report.builder import build
from tests.conftest import simulated

ODD = "evil|model_[click](http://x)"


def test_a_model_id_full_of_markdown_stays_text_in_every_table():
    records, _ = simulated(sessions=60, seed=5)
    renamed = {"openai/gpt-4o": ODD}
    for record in records:
        record["reviewer_id"] = renamed.get(record["reviewer_id"], record["reviewer_id"])
        record["model_id"] = renamed.get(record["model_id"], record["model_id"])

    page = render.markdown(build(from_records(records), resamples=50))

    assert ODD not in page
    assert r"evil\|model\_\[click\](http://x)" in page
    for line in page.splitlines():
        if line.startswith("| "):  # every row of a table has as many unescaped cell borders as its header
            header = next(h for h in page.split("\n\n") if line in h).splitlines()[0]
            assert len(re.findall(r"(?<!\\)\|", line)) == len(re.findall(r"(?<!\\)\|", header)), line
