"""Which column of a table of scores (``--from csv``) or which field of a JSON line (``--from
jsonl``) plays which part of a record: ``--map session=qid,candidate=model,...`` or a TOML
file of the same pairs. A mapping is checked here for what it says on its own (known roles,
each once); whether its columns are in the file is the reader's check, which can show the
file's columns."""

from __future__ import annotations

import shlex
import tomllib
from pathlib import Path

from council_db.errors import CouncilDbError

REQUIRED = ("session", "candidate", "reviewer", "score")
OPTIONAL = ("position", "length", "answer_text", "time", "reviewer_kind", "category")
ROLES = REQUIRED + OPTIONAL
EXAMPLE = "session=qid,candidate=model,reviewer=judge,score=rating"
FILE_OPTIONS = ("scale", "delimiter")  # what a mapping file may set beside the roles
# Column names that usually hold a role, for a mapping suggested from a file's header (sniff)
USUAL_NAMES = {
    "session": ("session", "session_id", "question_id", "qid", "prompt_id", "item", "item_id", "sample_id",
                "instruction_id", "id", "question", "prompt", "instruction"),
    "candidate": ("candidate", "model", "model_id", "generator", "policy", "system", "model_name"),
    "reviewer": ("reviewer", "judge", "judge_model", "grader", "annotator", "evaluator", "rater", "reviewer_id"),
    "score": ("score", "score_value", "rating", "grade", "judge_score", "preference", "value", "label"),
}

Pairs = tuple[tuple[str, str], ...]  # (role, column or dotted path), sorted by role


def parsed_map(texts: list[str]) -> dict[str, str]:
    """``--map`` values (each ``role=column`` pairs separated by commas) as {role: column}."""
    found: dict[str, str] = {}
    for text in texts:
        for item in (part for part in text.split(",") if part.strip()):
            role, sep, column = item.partition("=")
            role, column = role.strip(), column.strip()
            if not sep or not role or not column:
                raise CouncilDbError(f"--map: {item.strip()!r} is not ROLE=COLUMN; give pairs such as {EXAMPLE}")
            _add(found, role, column, "--map")
    return found


def mapping_file(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """A TOML mapping file: its roles ({role: column}) and its options (scale, delimiter)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as error:
        raise CouncilDbError(f"--map-file {path}: {error.strerror or error}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise CouncilDbError(f"--map-file {path}: not TOML ({error}); write one line per role, e.g. "
                             'session = "qid"') from None
    roles: dict[str, str] = {}
    options: dict[str, str] = {}
    for key, value in data.items():
        if not isinstance(value, str) or not value:
            raise CouncilDbError(f"--map-file {path}: {key} must be a non-empty string, e.g. {key} = \"...\"")
        if key in FILE_OPTIONS:
            options[key] = value
        else:
            _add(roles, key, value, f"--map-file {path}")
    return roles, options


def _add(found: dict[str, str], role: str, column: str, where: str) -> None:
    """One role's column, refusing a role no record has and a role given twice."""
    if role not in ROLES:
        raise CouncilDbError(f"{where}: unknown role {role!r}; the roles are {', '.join(ROLES)}")
    if role in found and found[role] != column:
        raise CouncilDbError(f"{where}: {role} is mapped twice ({found[role]!r} and {column!r}); keep one")
    found[role] = column


def checked_pairs(roles: dict[str, str]) -> Pairs:
    """The roles as FormatOptions keeps them, refusing two that say the same thing."""
    if "length" in roles and "answer_text" in roles:
        raise CouncilDbError("--map: give length (a number of characters) or answer_text (a text whose characters "
                             "are counted), not both")
    return tuple(sorted(roles.items()))


def missing_roles(roles: dict[str, str]) -> list[str]:
    """The required roles the mapping does not give."""
    return [role for role in REQUIRED if role not in roles]


def suggested_map(columns: list[str]) -> str:
    """A ``--map`` for a file with these columns: each required role on the column whose name
    usually holds it, else on COLUMN for the user to fill in."""
    by_name = {column.strip().lower(): column for column in columns}
    pairs = []
    for role in REQUIRED:
        column = next((by_name[name] for name in USUAL_NAMES[role] if name in by_name), "COLUMN")
        pairs.append(f"{role}={column}")
    return shlex.quote(",".join(pairs))
