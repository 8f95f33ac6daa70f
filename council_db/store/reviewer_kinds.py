"""Reviewer kinds (revision 0012): whether a reviewer is an LLM judge, a human rater or a gold
label, stored once per name in ``models.reviewer_kind``.

A kind is set by whatever states it: an import's lines or ``--reviewer-kind``, a recorded
session, or ``council-db reviewers --kind`` later. The last statement wins, and an import that
changes a stored kind says so (``mark_stated``), since a human rater read as a judge, or the
reverse, changes every agreement figure. A reviewer nothing states a kind for is a judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from council_db.store.database import Database

# The stored reviewers (names that gave at least one score) with their kind and counts: usable
# scores and their sessions from the day totals, excluded scores through their own index
# (revision 0011), so listing never reads the records. A session scored on two scales is
# counted on each.
REVIEWERS = """
SELECT m.name AS reviewer, m.reviewer_kind AS kind, COALESCE(u.records, 0) AS scores,
       COALESCE(u.sessions, 0) AS sessions, COALESCE(x.records, 0) AS excluded
FROM models AS m
LEFT JOIN (SELECT reviewer_id, SUM(records) AS records, SUM(sessions) AS sessions
           FROM reviewer_day_totals GROUP BY reviewer_id) AS u ON u.reviewer_id = m.id
LEFT JOIN (SELECT reviewer_id, COUNT(*) AS records FROM scores
           WHERE exclusion_id IS NOT NULL GROUP BY reviewer_id) AS x ON x.reviewer_id = m.id
WHERE u.reviewer_id IS NOT NULL OR x.reviewer_id IS NOT NULL
ORDER BY m.name
"""


COLUMNS = ("reviewer", "kind", "scores", "sessions", "excluded")


@dataclass(frozen=True)
class Remarking:
    """What ``council-db reviewers --kind KIND PATTERN...`` matched, and what it changes."""

    kind: str
    matched: list[str]  # every reviewer a pattern matched
    changes: dict[str, str]  # reviewer -> its kind now, for those whose kind is not ``kind``


def set_kinds(connection: Connection, kinds: dict[str, str]) -> None:
    """Store each name's kind (one statement per kind), in the connection's transaction."""
    from council_db.store.named_sql import run

    for kind in sorted(set(kinds.values())):
        names = sorted(name for name, stated in kinds.items() if stated == kind)
        for start in range(0, len(names), 500):
            run(connection, "UPDATE models SET reviewer_kind = :kind WHERE name IN :names",
                {"kind": kind, "names": names[start:start + 500]})


def mark_stated(connection: Connection, stated: dict[str, str], stored: dict[str, str]) -> list[dict[str, str]]:
    """Store the kinds an import states where they differ from ``stored`` (name -> kind, kept
    up to date); the changes, each as {"reviewer", "was", "now"}."""
    changed = {name: kind for name, kind in stated.items() if stored[name] != kind}
    if not changed:
        return []
    set_kinds(connection, changed)
    remarked = [{"reviewer": name, "was": stored[name], "now": kind} for name, kind in changed.items()]
    stored.update(changed)
    return remarked


def reviewers(db: Database, patterns: list[str] | None = None) -> list[dict]:
    """Every stored reviewer (or those a glob pattern matches) with its kind and counts."""
    with db.reading() as reader:
        rows = [dict(zip(COLUMNS, row)) for row in reader.rows(REVIEWERS)]
    return [row for row in rows if not patterns or _matches(row["reviewer"], patterns)]


def remarking(db: Database, kind: str, patterns: list[str]) -> Remarking:
    """The reviewers the glob patterns match (case-sensitive, as names are) and which of
    them are of another kind than ``kind``."""
    matched = reviewers(db, patterns)
    return Remarking(kind, [row["reviewer"] for row in matched],
                     {row["reviewer"]: row["kind"] for row in matched if row["kind"] != kind})


def remark(db: Database, plan: Remarking) -> None:
    """Give the planned reviewers their new kind, in one write transaction."""
    with db.writer() as connection, connection.begin():
        set_kinds(connection, dict.fromkeys(plan.changes, plan.kind))


def _matches(name: str, patterns: list[str]) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in patterns)
