"""council-db export --audit / --verify-audit: the bundle holds the window's report (JSON and
HTML), its data's fingerprint, the versions and the command that reproduces it, with a manifest
of each file's SHA-256; it reproduces with --as-of after more data is imported; verify fails
when a record is changed or deleted, or a file of the bundle is edited; no path, key or query
text is in it; bad paths are one line and exit 2."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from council_db import __version__
from council_db.errors import UsageError
from council_db.store.migrate import HEAD
from tests import realdata
from tests.conftest import Cli, both_backends, run_module, scalar, simulated, write_jsonl


def _files(bundle: Path) -> dict[str, str]:
    with zipfile.ZipFile(bundle) as opened:
        return {name: opened.read(name).decode() for name in opened.namelist()}


def _without_time(report: str) -> dict:
    document = json.loads(report)
    document.pop("generated_at")
    return document


def _store(cli: Cli, tmp_path: Path, seed: int = 1, sessions: int = 60, **config) -> None:
    records, _ = simulated(sessions=sessions, seed=seed, **config)
    result = cli("import", str(write_jsonl(tmp_path / f"judges-{seed}.jsonl", records)))
    assert result.exit_code == 0, result.output


@pytest.fixture
def stored(cli, tmp_path) -> Cli:
    _store(cli, tmp_path)
    return cli


def test_bundle_holds_the_report_fingerprint_versions_and_a_manifest_of_each_file(stored, db, tmp_path):
    bundle = tmp_path / "audit.zip"
    made = stored("export", "--audit", str(bundle))  # as of now

    assert made.exit_code == 0, made.output
    files = _files(bundle)
    assert sorted(files) == ["MANIFEST.sha256", "audit.json", "report.html", "report.json"]
    listed = dict(line.split("  ")[::-1] for line in files["MANIFEST.sha256"].splitlines())
    assert listed == {name: hashlib.sha256(files[name].encode()).hexdigest()
                      for name in ("report.json", "report.html", "audit.json")}
    audit = json.loads(files["audit.json"])
    assert (audit["council_db_version"], audit["schema_revision"]) == (__version__, HEAD)
    found = audit["fingerprint"]
    assert (found["sessions"], found["records"]) == (60, scalar(db, "SELECT COUNT(*) FROM scores")) == (60, 960)
    assert len(found["sha256"]) == 64
    (source,) = found["imports"]
    assert source["source"] == "judges-1.jsonl" and source["file_size"] == (tmp_path / "judges-1.jsonl").stat().st_size
    assert source["lines"] == [0, 960] and source["status"] == "complete" and len(source["head_sha256"]) == 64
    as_of = audit["options"]["as_of"]
    assert audit["window"]["as_of"] == as_of and audit["window"]["sessions"] == 60
    assert audit["reproduce"] == f"council-db bias-report --as-of {as_of} --format json"
    assert "<svg" in files["report.html"]
    reproduced = stored(*audit["reproduce"].split()[1:])
    assert _without_time(reproduced.stdout) == _without_time(files["report.json"])


def test_bundle_names_no_path_key_or_query_text(stored, db, tmp_path, monkeypatch):
    monkeypatch.setenv("COUNCIL_DB_PUSH_TOKEN", "secret-token-1234")
    bundle = tmp_path / "audit.zip"
    assert stored("export", "--audit", str(bundle), "--reviewer", "openai/gpt-4o").exit_code == 0

    text = "".join(_files(bundle).values())
    assert str(tmp_path) not in text and "/tmp" not in text and "secret-token-1234" not in text
    with db.reading() as reader:
        keys = [key for (key,) in reader.rows("SELECT value FROM local_keys")]
    assert keys and not any(key in text for key in keys)
    assert "query_hash" not in text and "query_metadata" not in text  # no query, not even its hash


def test_reproduces_after_more_data_is_imported(stored, tmp_path):
    bundle = tmp_path / "audit.zip"
    stored("export", "--audit", str(bundle), "--since", "2026-09-15")
    # more sessions, of other models, imported after the bundle's as-of time
    _store(stored, tmp_path, seed=2, sessions=30, models=["new/judge-a", "new/judge-b", "new/judge-c"])

    verified = stored("export", "--verify-audit", str(bundle))
    assert verified.exit_code == 0, verified.output
    assert verified.stdout.count("same    ") == 3
    audit = json.loads(_files(bundle)["audit.json"])
    now = stored(*audit["reproduce"].split()[1:])
    assert _without_time(now.stdout) == _without_time(_files(bundle)["report.json"])
    assert "--since 2026-09-15" in audit["reproduce"]


def test_verifies_after_a_later_import_added_records_to_the_bundles_sessions(cli, tmp_path):
    """FastChat grades each model on the same questions (sessions q81/t1, ...): a later file of
    another model's gradings adds records to the bundle's sessions, which its --as-of leaves out."""
    lines = realdata.MT_BENCH_JUDGMENTS.read_text(encoding="utf-8").splitlines(keepends=True)
    first, later = tmp_path / "first.jsonl", tmp_path / "later.jsonl"
    first.write_text("".join(line for line in lines if json.loads(line)["model"] != "mistral-orpo-mix"))
    later.write_text("".join(line for line in lines if json.loads(line)["model"] == "mistral-orpo-mix"))
    assert cli(*realdata.mt_bench_import(first)).exit_code == 0
    bundle = tmp_path / "audit.zip"
    assert cli("export", "--audit", str(bundle)).exit_code == 0
    assert cli(*realdata.mt_bench_import(later)).exit_code == 0

    verified = cli("export", "--verify-audit", str(bundle))
    assert verified.exit_code == 0, verified.output
    audit = json.loads(_files(bundle)["audit.json"])
    assert _without_time(cli(*audit["reproduce"].split()[1:]).stdout) == _without_time(_files(bundle)["report.json"])


@pytest.mark.parametrize("tamper", ["UPDATE scores SET score_value = score_value + 1 WHERE session_id = "
                                    "(SELECT MIN(id) FROM sessions) AND position = 0",
                                    "DELETE FROM scores WHERE session_id = (SELECT MAX(id) FROM sessions) "
                                    "AND position = 1"])
def test_verify_fails_after_a_record_is_changed_or_deleted(stored, db, tmp_path, tamper):
    bundle = tmp_path / "audit.zip"
    stored("export", "--audit", str(bundle))
    with db.engine.begin() as connection:
        connection.exec_driver_sql(tamper)

    verified = stored("export", "--verify-audit", str(bundle))
    assert verified.exit_code == 1
    assert "DIFFERS fingerprint" in verified.stdout and "same    manifest" in verified.stdout


def test_verify_fails_when_a_file_of_the_bundle_was_edited(stored, tmp_path):
    bundle, edited = tmp_path / "audit.zip", tmp_path / "edited.zip"
    stored("export", "--audit", str(bundle))
    files = _files(bundle)
    report = json.loads(files["report.json"])
    files["report.json"] = json.dumps({**report, "confidence": "moderate"}, indent=2)
    with zipfile.ZipFile(edited, "w") as out:
        for name, text in files.items():
            out.writestr(name, text)

    verified = stored("export", "--verify-audit", str(edited))
    assert verified.exit_code == 1
    assert "DIFFERS manifest: report.json changed" in verified.stdout
    assert "DIFFERS report: differs at confidence" in verified.stdout


@both_backends
def test_bundle_and_verify_on_both_backends(cli, db, tmp_path, backend):
    _store(cli, tmp_path, sessions=40)
    bundle = tmp_path / "audit.zip"
    assert cli("export", "--audit", str(bundle)).exit_code == 0
    assert cli("export", "--verify-audit", str(bundle)).exit_code == 0
    with db.engine.begin() as connection:
        connection.exec_driver_sql("UPDATE scores SET response_length_chars = response_length_chars + 1 "
                                   "WHERE session_id = (SELECT MIN(id) FROM sessions)")

    verified = cli("export", "--verify-audit", str(bundle))
    assert verified.exit_code == 1 and "DIFFERS fingerprint: the records' digest differs" in verified.stdout
    assert json.loads(_files(bundle)["audit.json"])["fingerprint"]["records"] == 640


@pytest.mark.parametrize(("args", "says"), [
    (["--audit", "{tmp}/nowhere/audit.zip"], "--audit: there is no directory"),
    (["--audit", "{tmp}/audit.txt"], "does not end in .zip"),
    (["--audit", "{tmp}/full.zip"], "exists: give a new file name"),
    (["--verify-audit", "{tmp}/full.zip"], "--verify-audit: cannot read"),
    (["--audit", "{tmp}/a.zip", "--session", "x"], "--session: records' options"),
    (["--as-of", "2026-01-01"], "--as-of: only with --audit"),
])
def test_bad_paths_and_options_are_one_line_and_exit_2(stored, tmp_path, args, says):
    (tmp_path / "full.zip").write_text("not a zip")
    result = stored("export", *[arg.format(tmp=tmp_path) for arg in args])

    assert isinstance(result.exception, UsageError) and result.exception.exit_code == 2
    assert says in str(result.exception) and "\n" not in str(result.exception)
    assert not (tmp_path / "a.zip").exists()


def test_a_bundle_whose_audit_json_was_broken_is_exit_2_saying_so(stored, tmp_path):
    bundle, broken = tmp_path / "audit.zip", tmp_path / "broken.zip"
    stored("export", "--audit", str(bundle))
    with zipfile.ZipFile(broken, "w") as out:
        for name, text in _files(bundle).items():
            out.writestr(name, "{not json" if name == "audit.json" else text)

    result = stored("export", "--verify-audit", str(broken))
    assert isinstance(result.exception, UsageError) and result.exception.exit_code == 2
    assert "audit.json or report.json is not as export --audit writes it" in str(result.exception)


def test_a_bad_bundle_path_in_a_process_is_one_line_on_stderr(tmp_path):
    result = run_module("--db", str(tmp_path / "c.db"), "export", "--audit", str(tmp_path / "no" / "a.zip"))

    assert result.returncode == 2 and result.stdout == b""
    assert result.stderr.decode().count("\n") == 1 and "--audit: there is no directory" in result.stderr.decode()
