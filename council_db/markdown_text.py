"""Data in Markdown output: escaped, so that a model id or a reason is never read as markup (a
| would end a table cell, [text](url) make a link, <b> a tag, _x_ emphasis), nor a control
character reach the terminal it is printed on (``terminal_text``)."""

from __future__ import annotations

import re

from council_db.terminal_text import terminal_text

_SPECIAL = re.compile(r"([\\`*\[\]<>|~#]|(?<!\w)_|_(?!\w))")


def markdown_text(text: str) -> str:
    """``text`` with every character Markdown would read as markup escaped, on one line."""
    return terminal_text(_SPECIAL.sub(r"\\\1", text).replace("\n", " "))
