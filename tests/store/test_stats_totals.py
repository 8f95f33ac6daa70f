"""council-db stats: its totals, now summed from session_stats and one scan of the records,
are the ones counted from the records one question at a time (the queries it used before)."""

from __future__ import annotations

from council_db.ingest.importer import import_files
from council_db.store.contents import stats
from tests.conftest import both_backends, scalar, write_jsonl
from tests.outlets.test_export_identical import varied_lines


@both_backends
def test_stats_totals_are_the_records_counted_one_by_one(db, tmp_path):
    import_files(db, [str(write_jsonl(tmp_path / "in.jsonl", varied_lines()))])
    found = stats(db)
    assert found["records"] == scalar(db, "SELECT COUNT(*) FROM scores") == 6 * 16
    assert found["reviewers"] == scalar(db, "SELECT COUNT(DISTINCT reviewer_id) FROM scores")
    assert found["models"] == scalar(db, "SELECT COUNT(DISTINCT model_id) FROM scores")
    assert found["self_reviews"] == scalar(db, "SELECT COUNT(*) FROM scores WHERE self_review") > 0
    assert found["position_not_display_order"] == scalar(db, "SELECT COUNT(*) FROM scores WHERE NOT display_order")
    from sqlalchemy import text

    with db.engine.connect() as connection:
        versions = dict(connection.execute(text(
            "SELECT s.schema_version, COUNT(*) FROM scores AS sc JOIN sessions AS s ON s.id = sc.session_id "
            "GROUP BY s.schema_version")).all())
        excluded = dict(connection.execute(text(
            "SELECT reason.code, COUNT(*) FROM scores AS sc JOIN exclusion_reasons AS reason "
            "ON reason.id = sc.exclusion_id GROUP BY reason.code")).all())
    assert found["schema_versions"] == versions and len(versions) == 3
    assert found["excluded"] == excluded and set(excluded) == {"unscored", "out_of_scale"}
    assert list(found["excluded"]) == sorted(excluded)
