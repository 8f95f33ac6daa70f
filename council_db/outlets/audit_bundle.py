"""An audit bundle (`council-db export --audit FILE.zip`): one window's bias report (JSON and
HTML, as bias-report writes them), pinned to an as-of time so it can be rebuilt, with the data's
fingerprint (store/fingerprint), the council-db and schema versions, the command that reproduces
it and a MANIFEST of each file's SHA-256; and its verification against the database
(`--verify-audit`): the files against the manifest, then the fingerprint and the report rebuilt
from the database. One zip file: easy to hand over, and written whole or not at all.

Nothing in it names a path, a query's text or a secret: the report's own figures, the window's
options, and each import's file name, size, head and tail hashes, lines and times."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from council_db import __version__
from council_db.errors import UsageError
from council_db.report import model as contract
from council_db.report.for_window import report_for_window
from council_db.store.database import Database
from council_db.store.fingerprint import fingerprint

FILES = ("report.json", "report.html", "audit.json")
MANIFEST = "MANIFEST.sha256"  # `sha256sum -c MANIFEST.sha256` checks the unpacked files
SEED = 0  # the report's bootstrap seed: bias-report's default, so its reproduce command needs none
FORMAT = 1  # audit.json's layout
# The window options a bundle keeps and bias-report takes, in the order its command gives them
OPTIONS = ("as_of", "since", "until", "reviewer", "model")


@dataclass(frozen=True)
class Check:
    """One thing verify compares: what, whether it still matches, and how it differs if not."""

    what: str
    same: bool
    detail: str


WindowOf = Callable[[dict[str, Any]], tuple[Any, dict[str, Any]]]  # options -> (Window, the report's filters)


def reproduce_command(options: dict[str, Any]) -> str:
    """The bias-report command that prints the bundle's report.json (but for its generated_at)."""
    words = ["council-db", "bias-report"]
    for name in OPTIONS:
        values = options.get(name)
        for value in values if isinstance(values, list) else [values] if values else []:
            words += [f"--{name.replace('_', '-')}", str(value)]
    return shlex.join([*words, "--format", "json"])


def _contents(db: Database, options: dict[str, Any], window_of: WindowOf) -> tuple[str, Any, dict[str, Any]]:
    """The window's report as JSON, the report, and the fingerprint's part of audit.json."""
    window, filters = window_of(options)
    made = report_for_window(db, window, filters, seed=SEED)
    sessions_sql, params = window.session_query()
    found, revision = fingerprint(db, sessions_sql, params, reviewers=window.reviewers, models=window.models,
                                  imported_by=window.imported_by())
    return contract.to_json(made.report), made, dict(schema_revision=revision, fingerprint=found.as_dict())


def write(db: Database, target: Path, options: dict[str, Any], window_of: WindowOf) -> dict[str, Any]:
    """Write the bundle of the window ``options`` give (``window_of`` makes it, as the CLI does)
    to ``target``, a new .zip; returns its audit.json."""
    report_json, made, data = _contents(db, options, window_of)
    if made.report.window.sessions == 0:
        raise UsageError(f"--audit: {made.empty_window_hint or 'no session in this window: the database holds none'}")
    audit = dict(bundle_format=FORMAT, council_db_version=__version__, **data, options=options,
                 window=contract.to_builtins(made.report)["window"], seed=SEED,
                 reproduce=reproduce_command(options), generated_at=made.report.generated_at)
    files = {"report.json": report_json, "report.html": made.html(),
             "audit.json": json.dumps(audit, indent=2, sort_keys=True) + "\n"}
    manifest = "".join(f"{hashlib.sha256(text.encode()).hexdigest()}  {name}\n" for name, text in files.items())
    partial = target.with_name(f".{target.name}.partial")
    try:
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # evidence: private
        with open(descriptor, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as bundle:
            for name, text in [*files.items(), (MANIFEST, manifest)]:
                bundle.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), text)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return audit


def read(path: Path) -> dict[str, str]:
    """The bundle's files by name; a file that is no bundle is a usage error naming it."""
    try:
        with zipfile.ZipFile(path) as bundle:
            files = {name: bundle.read(name).decode() for name in bundle.namelist()}
    except (OSError, zipfile.BadZipFile) as error:
        raise UsageError(f"--verify-audit: cannot read {path} as a zip file ({error}): give a bundle "
                         "export --audit wrote") from None
    missing = [name for name in (*FILES, MANIFEST) if name not in files]
    if missing:
        raise UsageError(f"--verify-audit: {path} has no {', '.join(missing)}: give a bundle export --audit wrote")
    try:
        audit = json.loads(files["audit.json"])
        json.loads(files["report.json"])
        known = isinstance(audit, dict) and {"options", "fingerprint"} <= set(audit) and \
            set(audit["options"]) == set(OPTIONS)
    except (ValueError, TypeError):
        known = False
    if not known:
        raise UsageError(f"--verify-audit: {path}'s audit.json or report.json is not as export --audit writes it: "
                         "give the bundle as it was written")
    return files


def verify(db: Database, files: dict[str, str], window_of: WindowOf) -> list[Check]:
    """The bundle's files against its manifest, then its fingerprint and report against the ones
    the database gives now for the same window and as-of time."""
    checks = [_manifest(files)]
    audit = json.loads(files["audit.json"])
    report_json, _, data = _contents(db, audit["options"], window_of)
    was, now = audit["fingerprint"], data["fingerprint"]
    changed = [f"{name} {was[name]:,} -> {now[name]:,}" for name in ("sessions", "records") if was[name] != now[name]]
    if was["sha256"] != now["sha256"]:
        changed.append("the records' digest differs")
    if was["imports"] != now["imports"]:
        changed.append("the imports differ")
    checks.append(Check("fingerprint", not changed, "; ".join(changed) or
                        f"{now['sessions']:,} sessions, {now['records']:,} records, sha256 {now['sha256'][:16]}..."))
    differs = _report_differences(json.loads(files["report.json"]), json.loads(report_json))
    checks.append(Check("report", not differs, f"differs at {', '.join(differs[:5])}" if differs else
                        "the same report JSON (but for generated_at)"))
    return checks


def _manifest(files: dict[str, str]) -> Check:
    listed = {}
    for line in files[MANIFEST].splitlines():
        digest, _, name = line.partition("  ")
        listed[name] = digest
    wrong = [name for name in FILES if listed.get(name) != hashlib.sha256(files[name].encode()).hexdigest()]
    return Check("manifest", not wrong, f"{', '.join(wrong)} changed since the bundle was written" if wrong else
                 f"{len(FILES)} files match their SHA-256")


def _report_differences(was: Any, now: Any, where: str = "") -> list[str]:
    """Where two report documents differ (generated_at, the time each was built, left out)."""
    if isinstance(was, dict) and isinstance(now, dict):
        return [found for key in sorted(set(was) | set(now)) if key != "generated_at" or where
                for found in _report_differences(was.get(key), now.get(key), f"{where}.{key}" if where else key)]
    if isinstance(was, list) and isinstance(now, list) and len(was) == len(now):
        return [found for i, (a, b) in enumerate(zip(was, now)) for found in _report_differences(a, b, f"{where}[{i}]")]
    return [] if was == now else [where or "the whole report"]
