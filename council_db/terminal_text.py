"""Data in text for a terminal: escaped, so that an id or a reason can never drive the
terminal. A stored value may hold ESC (retitle the window, change colours, write the
clipboard with OSC 52), a newline (forge a table row or a report line), a carriage return or
backspace (overwrite what was printed) or a bidirectional override (show text in another
order than it is). Each such character is shown as its Python escape (``\\x1b``, ``\\n``,
``\\u202e``), so the value stays recognisable and nothing else changes. JSON, JSONL and CSV
keep values byte for byte: their own formats escape them.
"""

from __future__ import annotations

import re

# C0 controls (newline and tab too), DEL, C1 controls, and the Unicode bidirectional
# embeddings, overrides and isolates ("Trojan Source", CVE-2021-42574).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def terminal_text(text: str) -> str:
    """``text`` on one line, with every control character shown as its escape."""
    return _CONTROL.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    return repr(match.group())[1:-1]
