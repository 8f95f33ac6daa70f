"""Drift by version: the same reviewer under another council configuration, or a model id
that names another snapshot of the same model.

* council_config_version: the joint model is fitted on each version's sessions alone, so each
  severity is adjusted for everything the report adjusts for, relative to the average reviewer
  *of that version*. Only that is identified: when sessions run under one version each, a
  change every reviewer shares cannot be told from a change in the questions. A reviewer that
  alone became 1 point more generous moves by 1 - 1/R against the average of R reviewers.
* model-id versions: an id whose last part is a snapshot marker (``-2024-08-06``,
  ``-20241022``, ``-002`` or ``@anything``) belongs to the family named by the rest
  (``openai/gpt-4o-2024-08-06`` -> ``openai/gpt-4o``). Different snapshots are already
  different reviewers in the joint model; here they are listed side by side per family.
A window that mixes versions gets a warning: its averages blend behaviours.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

import msgspec
import numpy as np

from council_db.analysis.loading.score_data import ScoreData, keep_sessions
from council_db.analysis.stats.unique_rows import distinct

if TYPE_CHECKING:
    from council_db.analysis.joint.joint_model import Effect

VERSION_LOOKUP_CHUNK = 10_000  # session keys per query (SQLite allows 32,766 parameters)
SNAPSHOT = re.compile(r"^(?P<family>.+?)(?:-\d{4}-\d{2}-\d{2}|-\d{8}|-\d{3}|@[^@/]+)$")


def family(model_id: str) -> str:
    """The model id without its snapshot marker (the id itself when it has none)."""
    match = SNAPSHOT.match(model_id)
    return match.group("family") if match else model_id


class VersionSeverity(msgspec.Struct, frozen=True):
    reviewer: str  # the reviewer id, or the family for model-id versions
    version_kind: str  # "council_config_version" or "model_id"
    version: str
    effect: Effect | None
    sessions: int
    records: int


def load_config_versions(db, data: ScoreData) -> list[str | None]:
    """Each session's council_config_version, aligned with ``data.session_keys``: looked up for
    the sessions analysed (a sample of a large window), never for the whole window."""
    from council_db.resources import read_sql

    query = read_sql("session_versions")
    versions: dict[str, str | None] = {}
    keys = data.session_keys
    with db.reading() as reader:
        for start in range(0, len(keys), VERSION_LOOKUP_CHUNK):
            versions.update(reader.rows(query, {"keys": list(keys[start:start + VERSION_LOOKUP_CHUNK])}))
    return [versions.get(key) for key in keys]


def config_version_severities(data: ScoreData, versions: list[str | None]) -> list[VersionSeverity]:
    """Adjusted severity per reviewer within each config version's sessions; empty when the
    window has one version."""
    from council_db.analysis.joint import joint_model

    labels = np.array([v or "(none)" for v in versions], dtype=object)
    if len(set(labels.tolist())) < 2:
        return []
    out = []
    for version in sorted(set(labels.tolist())):
        part = keep_sessions(data, labels == version)
        fit = joint_model.fit(part)
        for code in distinct(part.reviewer).tolist():
            mine = part.reviewer == code
            name = part.reviewers[code]
            out.append(VersionSeverity(name, "council_config_version", version, fit.severity.get(name),
                                       len(distinct(part.session[mine])), int(mine.sum())))
    return out


def model_id_severities(data: ScoreData, severity: dict) -> list[VersionSeverity]:
    """Severities of reviewers whose family appears under more than one id in the window."""
    families = Counter(family(r) for r in data.reviewers)
    out = []
    for code, reviewer in enumerate(data.reviewers):
        if families[family(reviewer)] < 2:
            continue
        mine = data.reviewer == code
        out.append(VersionSeverity(family(reviewer), "model_id", reviewer, severity.get(reviewer),
                                   len(distinct(data.session[mine])), int(mine.sum())))
    return out


def mixed_version_warnings(data: ScoreData, versions: list[str | None] | None) -> list[str]:
    """Say when a window blends council configurations or model snapshots."""
    out = []
    if versions:
        counts = Counter(v or "(none)" for v in versions)
        if len(counts) > 1:
            listed = ", ".join(f"{v} ({n:,} sessions)" for v, n in sorted(counts.items()))
            out.append(f"this window mixes council_config_version values: {listed}; compare them with "
                       "council-db trends, or narrow the window with --config-version")
    for kind, ids in (("reviewer", data.reviewers), ("candidate", data.models)):
        by_family: dict[str, list[str]] = {}
        for model_id in ids:
            by_family.setdefault(family(model_id), []).append(model_id)
        for name, members in sorted(by_family.items()):
            if len(members) > 1:
                out.append(f"{kind} {name} appears under {len(members)} model-id versions ({', '.join(members)}): "
                           "each is analysed as its own model")
    return out
