"""A report made of titled tables (``council-db trends``) as Markdown or one HTML page.

Cells are data: Markdown gets every character it would read as markup escaped, HTML gets
every value escaped, so a model id or reason can never become a link or a tag. The page is
self-contained (inline CSS, no scripts, no external URLs), like the bias report's.
"""

from __future__ import annotations

import html
import json
from typing import Any, Sequence

from council_db.markdown_text import markdown_text

Table = tuple[str, Sequence[dict[str, Any]]]  # a title and its rows (dicts with the same keys)
# Characters Markdown may read as markup; an underscore only where it could open or close emphasis.
_STYLE = ("body{font-family:system-ui,sans-serif;margin:2em;color:#222}"
          "table{border-collapse:collapse;margin-bottom:2em}"
          "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;white-space:nowrap}"
          "td.n{text-align:right;font-variant-numeric:tabular-nums}caption{text-align:left;font-weight:bold}")


def cell(value: Any) -> str:
    """A value as a table shows it: numbers to 4 significant digits, nothing for null."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def markdown(title: str, tables: Sequence[Table], notes: Sequence[str] = ()) -> str:
    out = [f"# {markdown_text(title)}"]
    for caption, rows in tables:
        out += ["", f"## {markdown_text(caption)}", ""]
        if not rows:
            out.append("Nothing to show.")
            continue
        columns = list(rows[0])
        out.append("| " + " | ".join(markdown_text(c) for c in columns) + " |")
        out.append("|" + "|".join("---:" if _numeric(rows, c) else "---" for c in columns) + "|")
        out += ["| " + " | ".join(markdown_text(cell(row.get(c))) for c in columns) + " |" for row in rows]
    if notes:
        out += ["", "## Warnings", ""] + [f"- {markdown_text(note)}" for note in notes]
    return "\n".join(out) + "\n"


def html_page(title: str, tables: Sequence[Table], notes: Sequence[str] = ()) -> str:
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
           f"<h1>{html.escape(title)}</h1>"]
    for caption, rows in tables:
        out.append(f"<table><caption>{html.escape(caption)}</caption>")
        if not rows:
            out.append("<tr><td>nothing to show</td></tr></table>")
            continue
        columns = list(rows[0])
        numeric = {c: _numeric(rows, c) for c in columns}
        out.append("<tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in columns) + "</tr>")
        out += ["<tr>" + "".join(f'<td{" class=n" if numeric[c] else ""}>{html.escape(cell(row.get(c)))}</td>'
                                 for c in columns) + "</tr>" for row in rows]
        out.append("</table>")
    if notes:
        out.append("<h2>Warnings</h2><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _numeric(rows: Sequence[dict[str, Any]], column: str) -> bool:
    return all(isinstance(r.get(column), (int, float)) and not isinstance(r.get(column), bool)
               or r.get(column) is None for r in rows)
