"""Each flag line states each p-value once, in every format: a flag whose message names its
test (all slots equal, a permutation) carries that test's p there, with q beside it, not a
second "(p, q)" repeating it; the JSON message keeps its wording."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from html import unescape

import pytest

from council_db.analysis.drift.session_means import session_series
from council_db.analysis.loading.score_data import from_records
from council_db.report import p_values, render, render_html
from council_db.report.builder import build
from tests.conftest import simulated

STATED_P = re.compile(r"\bp (<0\.001|[01]\.\d{3})")
STATED_Q = re.compile(r"\bq (<0\.001|[01]\.\d{3})")
TEST_NAMES = {"position": ("all slots equal: p ", "all its slots equal: p "),
              "change_point": ("permutation p ",)}


@pytest.fixture(scope="module")
def report_and_data():
    """Position bias in every reviewer (pooled and per-reviewer flags) and a step change in
    one reviewer (a change-point flag, tested by permutation)."""
    records, _ = simulated(sessions=300, seed=21, end=datetime(2026, 6, 1, tzinfo=timezone.utc),
                           position_effects=[0.4, 0.0, 0.0, -0.2],
                           drift={"anthropic/claude-3-5-sonnet": 1.0}, drift_at=0.5)
    data = from_records(records)
    return build(data, resamples=100), data


def text_lines(report, data) -> list[str]:
    return [line.removeprefix("  ! ") for line in render.text(report).splitlines() if line.startswith("  ! ")]


def markdown_lines(report, data) -> list[str]:
    flags = render.markdown(report).split("## Flags\n\n", 1)[1].split("\n\n", 1)[0]
    return [re.sub(r"\\(.)", r"\1", line.removeprefix("- ")) for line in flags.splitlines()]


def html_lines(report, data) -> list[str]:
    flags = re.search(r'<ul class="flags">(.*?)</ul>', render_html.html(report, session_series(data)), re.S)
    return [unescape(re.sub(r"<[^>]+>", "", item)) for item in re.findall(r"<li>(.*?)</li>", flags.group(1), re.S)]


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_every_flag_line_states_its_p_and_q_once_next_to_the_test_it_belongs_to(report_and_data, fmt):
    report, data = report_and_data
    kinds = {f.kind for f in report.flags}
    assert {"position", "change_point"} <= kinds
    assert sum(f.kind == "position" and "slots equal" in f.message for f in report.flags) >= 2  # pooled, a reviewer
    flags = [f for f in report.flags if fmt != "html" or f.kind != "anomaly"]  # the page lists anomalies apart
    lines = {"text": text_lines, "markdown": markdown_lines, "html": html_lines}[fmt](report, data)

    assert len(lines) == len(flags)
    for flag, line in zip(flags, lines):
        p, q = p_values.p_value(flag.p_value), p_values.p_value(flag.q_value)
        assert len(STATED_P.findall(line)) == 1 and f"p {p}" in line, line
        assert len(STATED_Q.findall(line)) == 1 and f"q {q}" in line, line
        named = [name for name in TEST_NAMES.get(flag.kind, ()) if name in flag.message]
        for name in named:  # the one p stated is the named test's, and q sits beside it
            assert flag.message.endswith(f"{name}{p})")  # the JSON message is as it was
            assert f"{name}{p}, q {q})" in line, line
