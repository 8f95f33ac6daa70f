"""council-db export --audit and --verify-audit: a window's report bundled with its data's
fingerprint for an auditor, and the check that the database still gives both
(outlets/audit_bundle)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from council_db.cli.context import message, state
from council_db.errors import UsageError

RECORDS_ONLY = {"session": "--session", "min_consent": "--min-consent", "output": "-o", "format": "--format"}


def _window_of(options: dict[str, Any]):
    """The Window and the report's filters of a bundle's options, as bias-report makes them."""
    from council_db.cli.window_options import window_and_filters

    return window_and_filters(sessions=None, days=None, since=options["since"], until=options["until"],
                              as_of=options["as_of"], reviewer=options["reviewer"], model=options["model"],
                              config_version=None, category=None)


def _new_bundle(audit: str) -> Path:
    """--audit's file: a new .zip (or an empty file) in a directory that exists."""
    target = Path(audit).expanduser()
    if target.suffix.lower() != ".zip":
        raise UsageError(f"--audit: {audit} does not end in .zip: give a file name such as audit.zip")
    if not target.parent.is_dir():
        raise UsageError(f"--audit: there is no directory {target.parent}: create it or give another path")
    if target.is_dir() or (target.exists() and target.stat().st_size > 0):
        raise UsageError(f"--audit: {audit} exists: give a new file name (a bundle is never overwritten)")
    return target


def audit_command(ctx: typer.Context, audit: str | None, verify_audit: str | None, window: dict[str, Any],
                  records_only: dict[str, Any]) -> None:
    """Write a bundle (--audit) or verify one (--verify-audit); export's record options are refused."""
    from council_db.outlets import audit_bundle

    if audit is not None and verify_audit is not None:
        raise UsageError("--audit and --verify-audit: give one of them")
    if audit is None and verify_audit is None:
        raise UsageError("--as-of: only with --audit (export writes every stored record)")
    given = [option for name, option in RECORDS_ONLY.items() if records_only[name]]
    if given:
        raise UsageError(f"{', '.join(given)}: records' options, not with --audit or --verify-audit")
    if verify_audit is not None:
        stated = [f"--{name.replace('_', '-')}" for name, value in window.items() if value]
        if stated:
            raise UsageError(f"{', '.join(stated)}: the bundle states its window; give --verify-audit alone")
        files = audit_bundle.read(Path(verify_audit).expanduser())
        checks = audit_bundle.verify(state(ctx).database(read_only=True), files, _window_of)
        for check in checks:
            print(f"{'same' if check.same else 'DIFFERS':8}{check.what}: {check.detail}")
        raise typer.Exit(0 if all(check.same for check in checks) else 1)
    target = _new_bundle(audit)
    options = _options(window)
    _window_of(options)  # a time that cannot be read is a usage error before the database is opened
    made = audit_bundle.write(state(ctx).database(read_only=True), target, options, _window_of)
    found = made["fingerprint"]
    message(f"wrote the audit bundle {audit}: {found['sessions']:,} sessions, {found['records']:,} records "
            f"as of {options['as_of']}; reproduce: {made['reproduce']}")


def _options(window: dict[str, Any]) -> dict[str, Any]:
    """The bundle's window options: --as-of now when not given, reviewer and model as lists."""
    from datetime import datetime, timezone

    now = datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")
    return dict(as_of=window["as_of"] or now, since=window["since"], until=window["until"],
                reviewer=[window["reviewer"]] if window["reviewer"] else [],
                model=[window["model"]] if window["model"] else [])
