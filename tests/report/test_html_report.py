"""council-db bias-report --format html: one self-contained page whose charts a real browser
(headless Chromium, Debian's package) draws, offline."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from html import escape, unescape
from pathlib import Path

import msgspec
import numpy as np
import pytest
from PIL import Image

from council_db.analysis.drift.session_means import session_series
from council_db.analysis.loading.score_data import from_rows
from council_db.report import p_values, render, svg
from council_db.report.model import BiasReport
from council_db.report.render_html import COLOURS
from tests.conftest import browser, run_module

SVG_XMLNS = "http://www.w3.org/2000/svg"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def council_db(*args: str) -> str:
    result = run_module(*args)
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode()


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """The HTML report of 120 simulated sessions over 30 days with every effect planted,
    anomalous sessions and a drifting reviewer among them."""
    folder = tmp_path_factory.mktemp("html")
    db, records, page = folder / "council.db", folder / "sim.jsonl", folder / "report.html"
    council_db("simulate", "-o", str(records), "--sessions", "120", "--days", "30", "--seed", "3",
               "--reviewer-offset", "openai/gpt-4o=-0.8", "--position-effect", "0.4,0,0,-0.2",
               "--self-preference", "0.5", "--verbosity", "0.3", "--anomalies", "0.05",
               "--drift", "google/gemini-1.5-pro=1.5")
    council_db("--db", str(db), "import", str(records))
    assert council_db("--db", str(db), "bias-report", "--format", "html", "-o", str(page)) == ""
    return page


@pytest.fixture(scope="module")
def json_report(report) -> BiasReport:
    return msgspec.json.decode(council_db("--db", str(report.parent / "council.db"), "bias-report", "--format", "json"),
                               type=BiasReport)


@pytest.fixture(scope="module")
def screenshot(report, tmp_path_factory) -> np.ndarray:
    chromium_binary = browser()
    folder = tmp_path_factory.mktemp("chromium")
    shot = folder / "shot.png"
    subprocess.run([chromium_binary, *CHROMIUM_FLAGS, f"--user-data-dir={folder / 'profile'}", f"--screenshot={shot}",
                    "--window-size=1200,2000", report.resolve().as_uri()],
                   capture_output=True, timeout=180, check=True)
    return np.asarray(Image.open(shot).convert("RGB"))


def rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def region(image: np.ndarray, colour: str) -> tuple[int, tuple[int, int, int, int] | None]:
    """How many pixels have exactly this colour, and their bounding box (left, top, right, bottom)."""
    ys, xs = np.nonzero(np.all(image == rgb(colour), axis=2))
    if not len(xs):
        return 0, None
    return len(xs), (int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max()))


def test_the_screenshot_shows_every_chart_in_its_own_region(screenshot):
    boxes = {}
    for chart, colour in COLOURS.items():
        count, box = region(screenshot, colour)
        assert count >= 100, f"the {chart} chart ({colour}) is not drawn: {count} pixels"
        left, top, right, bottom = box
        assert right - left >= 40, f"the {chart} chart is only {right - left} px wide"
        boxes[chart] = box
    for a in boxes:
        for b in boxes:
            if a < b:
                (l1, t1, r1, b1), (l2, t2, r2, b2) = boxes[a], boxes[b]
                assert r1 < l2 or r2 < l1 or b1 < t2 or b2 < t1, f"the {a} and {b} charts overlap"
    assert boxes["severity"][1] < boxes["length"][1] < boxes["session_means"][1], "charts in page order"


def test_a_blank_page_would_fail_the_colour_check(tmp_path):
    blank = np.full((20, 20, 3), 255, dtype=np.uint8)
    assert all(region(blank, colour)[0] == 0 for colour in COLOURS.values())


def test_the_page_names_no_url_but_the_svg_namespace_and_needs_no_script(report):
    page = report.read_text(encoding="utf-8")

    assert set(re.findall(r"https?://[^\s\"'<>)]+", page)) == {SVG_XMLNS}
    assert page.count("<svg") == 8  # seven charts, the length chart in two panels
    for needs_something_else in ("<script", "src=", "href=", "url(", "@import", "<link", "<iframe"):
        assert needs_something_else not in page.lower()


def test_the_page_carries_the_numbers_with_their_window(report):
    page = report.read_text(encoding="utf-8")

    assert "120 sessions" in page and "Confidence: high" in page
    assert "openai/gpt-4o" in page and "harsh" in page
    for title in ("Reviewer severity", "Slot effects", "Length effect", "Self-preference", "Candidate quality",
                  "Trends", "Session mean scores over time"):
        assert f"<h2>{title}</h2>" in page


def test_too_few_sessions_give_a_page_that_says_what_is_not_estimated(tmp_path):
    records, db = tmp_path / "few.jsonl", tmp_path / "council.db"
    council_db("simulate", "-o", str(records), "--sessions", "3")
    council_db("--db", str(db), "import", str(records))

    page = council_db("--db", str(db), "bias-report", "--format", "html")

    assert page.startswith("<!DOCTYPE html>") and "Confidence: insufficient" in page
    assert page.count("Not estimated (see warnings).") == 6
    assert "collecting data" in page


def test_output_writes_any_format_to_a_file(report, tmp_path):
    db = report.parent / "council.db"
    out = tmp_path / "report.json"

    assert council_db("--db", str(db), "bias-report", "--format", "json", "--seed", "1", "-o", str(out)) == ""

    written = json.loads(out.read_text())
    printed = json.loads(council_db("--db", str(db), "bias-report", "--format", "json", "--seed", "1"))
    assert {k: v for k, v in written.items() if k != "generated_at"} == {
        k: v for k, v in printed.items() if k != "generated_at"}


def test_output_to_a_missing_folder_is_an_error_naming_it(report, tmp_path):
    db = report.parent / "council.db"

    result = run_module("--db", str(db), "bias-report", "--format", "html", "-o", str(tmp_path / "nope" / "r.html"))

    assert result.returncode == 1
    assert result.stderr.decode() == f"error: cannot write the report to {tmp_path / 'nope' / 'r.html'}: " \
                                     "No such file or directory\n"


def test_session_series_gives_a_ci_only_where_a_stretch_holds_two_sessions():
    day = 86_400_000_000
    scores = [5.0, 7.0, 6.0, 8.0] * 5
    rows = [(f"s{i:02}", i * day, "r", "m", 0, 100, scores[i]) for i in range(19)]
    rows += [("late", 100 * day, "r", "m", 0, 100, 9.0)]

    series = session_series(from_rows(rows))

    assert [p.mean for p in series.sessions] == scores[:19] + [9.0]
    early, late = series.stretches  # 20 sessions: two stretches of 50 days
    assert (early.sessions, late.sessions) == (19, 1)
    assert early.mean == pytest.approx(sum(scores[:19]) / 19) and early.ci_low < early.mean < early.ci_high
    assert late.mean == 9.0 and late.ci_low is None and late.ci_high is None


def test_nice_ticks_are_round_and_cover_the_range():
    assert svg.nice_ticks(-0.53, 0.31) == [-0.5, -0.25, 0.0, 0.25]
    assert svg.nice_ticks(0, 1) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert svg.nice_ticks(5.9, 7.3) == [6.0, 6.5, 7.0]


# Every text element's box as the browser lays it out, against its chart's own width, and each
# chart's box on the page against its section's.
MEASURE = """<script>
const outside = [];
let measured = 0;
for (const chart of document.querySelectorAll("svg")) {
  const width = chart.viewBox.baseVal.width;
  const section = chart.closest("section");
  if (section) {
    const drawn = chart.getBoundingClientRect(), room = section.getBoundingClientRect();
    if (drawn.left < room.left || drawn.right > room.right) outside.push("the chart in #" + section.id);
  }
  for (const text of chart.querySelectorAll("text")) {
    const box = text.getBBox();
    measured += 1;
    if (box.x < 0 || box.x + box.width > width) outside.push(text.textContent);
  }
}
document.getElementById("measured").textContent = JSON.stringify({measured, outside});
</script>"""


def texts_outside_their_chart(page: str, folder: Path) -> tuple[int, list[str]]:
    """(texts measured, texts reaching past their chart's edge) in headless Chromium."""
    measuring = folder / "measuring.html"
    measuring.write_text(page.replace("</body>", f'<pre id="measured"></pre>{MEASURE}</body>'), encoding="utf-8")
    done = subprocess.run([browser(), *CHROMIUM_FLAGS, f"--user-data-dir={folder / 'profile'}",
                           "--window-size=1200,2000", "--dump-dom", measuring.resolve().as_uri()],
                          capture_output=True, timeout=180, check=True)
    found = re.search(r'<pre id="measured">(.*?)</pre>', done.stdout.decode())
    result = json.loads(unescape(found.group(1)))
    return result["measured"], result["outside"]


def test_no_label_is_shortened_and_every_text_fits_its_chart_in_the_browser(report, tmp_path):
    page = report.read_text(encoding="utf-8")

    assert "…" not in page
    for label in ("anthropic/claude-3-5-sonnet", "meta-llama/llama-3.1-70b: slot 0", "within-session r (headline)",
                  "naive pooled r (llm-council)", "joint model, within model"):
        assert f">{label}</text>" in page
    measured, outside = texts_outside_their_chart(page, tmp_path)
    assert measured > 50 and outside == []


def test_labels_and_notes_of_any_length_fit_a_forest_chart(tmp_path):
    rows = [svg.Row("a-vendor-with-a-long-name/an-even-longer-model-name-2025-01-01-preview: slot 0", 0.4, 0.1, 0.7,
                    note="harsh drifts", strong=True),
            svg.Row("WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW", -0.2, -0.5, 0.1),
            svg.Row("模型评审员-长名称-测试", 0.0, None, None, note="a note that runs on for quite a while")]
    page = (f"<!DOCTYPE html><html><body>{svg.forest(rows, colour='#1f77b4', axis_label='points')}</body></html>")

    measured, outside = texts_outside_their_chart(page, tmp_path)

    assert measured >= 6 and outside == []
    assert all(f">{escape(row.label)}</text>" in page for row in rows)


def test_q_values_read_as_in_the_text_report(report, json_report):
    page = report.read_text(encoding="utf-8")

    assert not re.search(r"\d(\.\d+)?e-\d", page), "no q or p value in e-notation"
    assert "q &lt;0.001" in page
    for flag in json_report.flags:
        if flag.kind != "anomaly":
            assert f"<li>{escape(p_values.flag_line(flag))}</li>" in page  # the text report's flag line


def test_anomalous_sessions_are_folded_under_one_heading_with_their_count(report, json_report):
    page = report.read_text(encoding="utf-8")
    anomalies = json_report.anomalies
    assert len(anomalies) >= 3

    folded = re.search(r"<details[^>]*>(.*?)</details>", page, re.S)
    assert folded and page.count("<details") == 1
    assert f"<summary>Anomalous sessions: {len(anomalies)} at q &lt;= 0.05" in folded.group(1)
    for anomaly in anomalies:
        assert page.count(anomaly.session_id) == 1 and anomaly.session_id in folded.group(1)


def test_candidate_quality_and_trends_are_charted_with_their_cis(report, json_report):
    page = report.read_text(encoding="utf-8")
    quality = re.search(r'<section class="chart" id="quality">(.*?)</section>', page, re.S).group(1)
    trends = re.search(r'<section class="chart" id="trends">(.*?)</section>', page, re.S).group(1)

    for model in json_report.models:
        assert f">{model.model_id}</text>" in quality
        assert f"{model.quality.estimate:+.2f} [{model.quality.ci_low:+.2f}, {model.quality.ci_high:+.2f}]" in quality
    flagged = {f.subject for f in json_report.flags if f.kind == "trend"}
    assert "reviewer google/gemini-1.5-pro" in flagged
    unit, across_span = render.trend_unit(json_report)
    assert across_span and unit.startswith("points across the window's 30 days") and escape(unit) in trends
    for trend in json_report.trends:
        label = f"{trend.kind} {trend.subject}"
        bold = ' font-weight="bold"' if label in flagged else ""
        assert f'fill="#333333"{bold}>{label}</text>' in trends
        change = trend.change_over_span
        assert f"{change.estimate:+.2f} [{change.ci_low:+.2f}, {change.ci_high:+.2f}]" in trends


def test_the_report_file_is_private_like_an_export(report):
    assert stat.S_IMODE(os.stat(report).st_mode) == 0o600
