"""Data in Markdown output: escaped, so that a model id or a reason is never read as markup (a
| would end a table cell, [text](url) make a link, <b> a tag, _x_ emphasis)."""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"([\\`*\[\]<>|~#]|(?<!\w)_|_(?!\w))")


def markdown_text(text: str) -> str:
    """``text`` with every character Markdown would read as markup escaped, on one line."""
    return _SPECIAL.sub(r"\\\1", text).replace("\n", " ")
