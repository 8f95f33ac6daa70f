"""The gate's outcomes as `council-db check` writes them: text (one line per rule and
subject), JSON (``SCHEMA_VERSION``, documented in docs/commands.md), JUnit XML (one testcase
per rule and subject), GitHub workflow annotations and a Markdown step summary."""

from __future__ import annotations

import json
from typing import Any

from council_db.gate.rules import Rule
from council_db.gate.verdicts import Outcome, exit_code
from council_db.markdown_text import markdown_text
from council_db.report.model import ReportWindow
from council_db.report.text_layout import fitted
from council_db.terminal_text import terminal_text

SCHEMA_VERSION = "1.0.0"


def _counts(outcomes: list[Outcome]) -> dict[str, int]:
    return {status: sum(o.status == status for o in outcomes) for status in ("pass", "fail", "skip")}


def _verdict(outcomes: list[Outcome]) -> str:
    counts = _counts(outcomes)
    return (f"{'FAILED' if counts['fail'] else 'passed'}: {counts['pass']} passed, {counts['fail']} failed, "
            f"{counts['skip']} skipped")


def text(outcomes: list[Outcome], window: ReportWindow, width: int | None = None) -> str:
    """A line per result and the verdict; cut at spaces to ``width`` (a terminal's), whole
    where None (a CI log or a file: one line per result to grep)."""
    lines = [terminal_text(f"{o.status.upper():4}  {o.rule}  {o.subject}: {o.message}") for o in outcomes]
    size = f"({window.sessions:,} sessions, {window.records:,} records)"
    lines.append(f"{_verdict(outcomes)} {size}")
    if width is not None:
        lines = [part for line in lines for part in fitted(line, width)]
    return "\n".join(lines) + "\n"


def window_document(window: ReportWindow) -> dict[str, Any]:
    """The window the rules were judged on, as the JSON outputs state it."""
    return {"start": window.start, "end": window.end, "sessions": window.sessions, "records": window.records,
            "as_of": window.as_of, "requested": window.requested}


def document(outcomes: list[Outcome], rules: list[Rule], window: ReportWindow) -> dict[str, Any]:
    """The --format json document."""
    return {"check_schema_version": SCHEMA_VERSION, "passed": exit_code(outcomes) == 0,
            "exit_code": exit_code(outcomes), "counts": _counts(outcomes), "window": window_document(window),
            "rules": [rule.as_dict() for rule in rules], "results": [o.as_dict() for o in outcomes]}


def as_json(outcomes: list[Outcome], rules: list[Rule], window: ReportWindow) -> str:
    return json.dumps(document(outcomes, rules, window), indent=2) + "\n"


def junit(outcomes: list[Outcome]) -> str:
    """JUnit XML: a testsuite of one testcase per rule and subject; a failure or a skip carries the message."""
    import xml.etree.ElementTree as ET

    counts = _counts(outcomes)
    suites = ET.Element("testsuites", name="council-db check", tests=str(len(outcomes)),
                        failures=str(counts["fail"]), skipped=str(counts["skip"]))
    suite = ET.SubElement(suites, "testsuite", name="council-db check", tests=str(len(outcomes)),
                          failures=str(counts["fail"]), errors="0", skipped=str(counts["skip"]))
    for o in outcomes:  # control characters as escapes: XML 1.0 cannot hold most of them
        message = terminal_text(o.message)
        case = ET.SubElement(suite, "testcase", classname=f"council-db.check.{o.rule}", name=terminal_text(o.subject))
        if o.status == "fail":
            ET.SubElement(case, "failure", message=message, type=o.rule).text = message
        elif o.status == "skip":
            ET.SubElement(case, "skipped", message=message)
        else:
            ET.SubElement(case, "system-out").text = message
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _escaped(value: str, *, prop: bool = False) -> str:
    """GitHub's workflow-command escaping (actions/toolkit): data; a property also escapes : and ,.
    Other control characters become escapes, as in every text council-db prints for people."""
    value = terminal_text(value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))
    return value.replace(":", "%3A").replace(",", "%2C") if prop else value


def github(outcomes: list[Outcome]) -> str:
    """An ``::error`` annotation per failure, a ``::warning`` per skip, then the verdict line."""
    lines = []
    for o in outcomes:
        if o.status != "pass":
            level = "error" if o.status == "fail" else "warning"
            title = _escaped(f"council-db check {o.rule}: {o.subject}", prop=True)
            lines.append(f"::{level} title={title}::{_escaped(o.message)}")
    return "\n".join([*lines, f"council-db check {_verdict(outcomes)}"]) + "\n"


def step_summary(outcomes: list[Outcome], window: ReportWindow) -> str:
    """The Markdown appended to $GITHUB_STEP_SUMMARY: the verdict and a table of every outcome."""
    mark = {"pass": "✅ pass", "fail": "❌ fail", "skip": "⚪ skip"}
    rows = [f"| {mark[o.status]} | {markdown_text(o.rule)} | {markdown_text(o.subject)} | {markdown_text(o.message)} |"
            for o in outcomes]
    return "\n".join([f"## council-db check: {_verdict(outcomes)}", "",
                      f"Window: {window.sessions:,} sessions, {window.records:,} records"
                      + (f", {markdown_text(window.requested)}" if window.requested else "") + ".", "",
                      "| | rule | subject | result |", "|---|---|---|---|", *rows]) + "\n\n"
