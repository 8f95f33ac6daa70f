"""Text in CSV written for people, who open it in a spreadsheet: a cell that a spreadsheet
would run as a formula (one starting with =, +, -, @, a tab or a carriage return, as a stored
id may: "=HYPERLINK(...)", "@SUM(...)") gets a leading single quote, as OWASP's "CSV
Injection" advice says, so it shows as the text it is. A number is never a formula and keeps
its sign ("-0.5" stays). JSON and JSONL keep every value as it is.
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_text(text: str) -> str:
    """``text`` as a CSV cell a spreadsheet shows as text, never runs."""
    if text.startswith(FORMULA_STARTS) and not _number(text):
        return "'" + text
    return text


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
