"""What `council-db sql` lets through: one statement that only reads.

The checks here are the first line (a clear message before anything runs); the second is
each dialect's own read-only machinery (see readonly_sql.py), which holds even if a check
here were fooled.
"""

from __future__ import annotations

import re

from council_db.errors import CouncilDbError

READ_STARTS = {"SELECT", "WITH", "VALUES"}
SQLITE_READ_STARTS = READ_STARTS | {"PRAGMA", "EXPLAIN"}

# PRAGMAs that only ever read, whatever their argument (the argument names a table or index).
READ_PRAGMAS = {
    "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo", "foreign_key_list",
    "database_list", "collation_list", "function_list", "module_list", "pragma_list", "compile_options",
    "integrity_check", "quick_check", "foreign_key_check",
}
# PRAGMAs that read a setting when given no value (and would write one when given a value).
SETTING_PRAGMAS = {
    "user_version", "schema_version", "application_id", "page_size", "page_count", "freelist_count",
    "journal_mode", "encoding", "auto_vacuum", "foreign_keys", "busy_timeout", "data_version",
}


class Refused(CouncilDbError):
    """A statement council-db sql will not run, with what was refused and why."""

    exit_code = 2

    def __init__(self, what: str):
        super().__init__(f"{what} is refused: council-db sql runs one read-only statement "
                         "(SELECT, WITH ... SELECT, VALUES; on SQLite also EXPLAIN and PRAGMAs that only read)")


_TOKENS = r"""
    (?P<space>\s+)
  | (?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<string>'(?:[^']|'')*(?:'|\Z))
  | (?P<quoted>"(?:[^"]|"")*(?:"|\Z)|`(?:[^`]|``)*(?:`|\Z)|\[[^\]]*(?:\]|\Z))
  | (?P<semicolon>;)
  | (?P<word>[A-Za-z_][A-Za-z_0-9$]*)
  | (?P<other>.)
"""
# PostgreSQL's $tag$ ... $tag$ strings; in SQLite a $ starts a parameter name instead.
_DOLLAR = r"(?P<dollar>\$(?P<tag>[A-Za-z_][A-Za-z_0-9]*)?\$.*?(?:\$(?P=tag)\$|\Z)) |"
_FLAGS = re.VERBOSE | re.DOTALL
_TOKEN = {False: re.compile(_TOKENS, _FLAGS), True: re.compile(_DOLLAR + _TOKENS, _FLAGS)}


def statements(sql: str, *, dollar_quotes: bool = False) -> list[list[str]]:
    """The statements in ``sql``, each as its words upper-cased (strings and quoted names as
    one mark), split on the semicolons outside strings, quoted names and comments."""
    found: list[list[str]] = [[]]
    for match in _TOKEN[dollar_quotes].finditer(sql):
        kind = match.lastgroup
        if kind == "semicolon":
            found.append([])
        elif kind == "word":
            found[-1].append(match.group().upper())
        elif kind not in ("space", "comment"):
            found[-1].append(match.group()[:1])
    return [words for words in found if words]


def check(sql: str, dialect: str) -> None:
    """Refuse anything but one statement that starts as a read; the database enforces the rest."""
    found = statements(sql, dollar_quotes=dialect == "postgresql")
    if not found:
        raise CouncilDbError("no SQL statement given: write one, e.g. council-db sql \"SELECT * FROM slot_means\"",
                             ) from None
    if len(found) > 1:
        raise Refused(f"running several statements ({len(found)} found, separated by ';')")
    first = found[0][0]
    allowed = SQLITE_READ_STARTS if dialect == "sqlite" else READ_STARTS
    if first not in allowed:
        raise Refused(f"{first}" if first.isalpha() or first == "_" else f"a statement starting with {first!r}")


def pragma_allowed(name: str, argument: str | None) -> bool:
    """Whether a PRAGMA (as SQLite's authorizer reports it) only reads."""
    name = name.lower()
    return name in READ_PRAGMAS or (name in SETTING_PRAGMAS and argument is None)
