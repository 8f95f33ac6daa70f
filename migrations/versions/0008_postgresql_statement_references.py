"""PostgreSQL: the references of the rows an import writes are kept once per statement

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24

PostgreSQL checks a foreign key row by row: an index probe and a row lock per row and key,
six keys per score row. Importing 100k sessions, that was 80% of the server's work (35 of
44 CPU seconds; issue 16). The importer only writes ids that it read or inserted in the same
transaction under the writers' lock, which SQLite's bulk writer already relies on; so on
PostgreSQL the foreign keys of scores, session_stats and sessions.import_id go, and what
else they did is kept by triggers that run once per statement:
- deleting sessions deletes their scores and session_stats rows (was ON DELETE CASCADE),
  and deleting imports empties the sessions' import_id (was ON DELETE SET NULL);
- deleting a row of models, scales, exclusion_reasons or record_envelopes that a record
  refers to is refused, and so is a TRUNCATE of any of these tables (sessions and imports
  too) unless the tables referring to it are empty (or truncated with it);
- the id of a row of any of them cannot change.
Each trigger first takes the writers' advisory lock (store/database.py), so an edit by hand
waits for a running import, which cannot then be left holding an id that the edit removed.
An insert by hand is not checked: `council-db db check` finds a row that refers to a missing
one (store/references.py). SQLite keeps its foreign keys; nothing changes there.
"""

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

# (table, column, referred table, ON DELETE): the foreign keys that PostgreSQL checked per row
FOREIGN_KEYS = (
    ("scores", "envelope_id", "record_envelopes", None),
    ("scores", "exclusion_id", "exclusion_reasons", None),
    ("scores", "model_id", "models", None),
    ("scores", "reviewer_id", "models", None),
    ("scores", "scale_id", "scales", None),
    ("scores", "session_id", "sessions", "CASCADE"),
    ("session_stats", "scale_id", "scales", None),
    ("session_stats", "session_id", "sessions", "CASCADE"),
    ("sessions", "import_id", "imports", "SET NULL"),
)
REFERRED = ("sessions", "models", "scales", "exclusion_reasons", "record_envelopes", "imports")
WRITE_LOCK_KEY = 27988572848220524  # store/database.py's, written out: a migration does the same thing forever

FUNCTIONS = f"""
CREATE FUNCTION council_db_references() RETURNS trigger LANGUAGE plpgsql AS $$
-- Revision 0008: what the foreign keys of the rows an import writes did, once per statement.
-- TG_ARGV: (table, column, ON DELETE) for each reference to this table's id: CASCADE deletes
-- the rows referring to a deleted row, SET NULL empties their column, NO ACTION refuses.
DECLARE
    i integer;
    referred boolean := false;
    gone constant text := 'ANY (ARRAY(SELECT id FROM removed))';
BEGIN
    PERFORM pg_advisory_xact_lock({WRITE_LOCK_KEY});
    FOR i IN 0 .. TG_NARGS - 1 BY 3 LOOP
        IF TG_OP = 'TRUNCATE' THEN
            EXECUTE format('SELECT EXISTS (SELECT FROM %I)', TG_ARGV[i]) INTO referred;
        ELSIF TG_ARGV[i + 2] = 'CASCADE' THEN
            EXECUTE format('DELETE FROM %I WHERE %I = %s', TG_ARGV[i], TG_ARGV[i + 1], gone);
        ELSIF TG_ARGV[i + 2] = 'SET NULL' THEN
            EXECUTE format('UPDATE %I SET %I = NULL WHERE %I = %s', TG_ARGV[i], TG_ARGV[i + 1], TG_ARGV[i + 1],
                           gone);
        ELSE
            EXECUTE format('SELECT EXISTS (SELECT FROM %I WHERE %I = %s)', TG_ARGV[i], TG_ARGV[i + 1], gone)
                INTO referred;
        END IF;
        IF referred THEN
            RAISE foreign_key_violation USING MESSAGE = format(
                '%s on %s: rows of %s refer to it (%s.%s)', TG_OP, TG_TABLE_NAME, TG_ARGV[i], TG_ARGV[i],
                TG_ARGV[i + 1]);
        END IF;
    END LOOP;
    RETURN NULL;
END $$;

CREATE FUNCTION council_db_fixed_id() RETURNS trigger LANGUAGE plpgsql AS $$
-- Revision 0008: records refer to these rows by id, which no foreign key follows any more.
BEGIN
    RAISE foreign_key_violation USING MESSAGE = format('%s.id cannot change: records refer to it', TG_TABLE_NAME);
END $$;
"""


def _referring(table: str) -> str:
    """The trigger arguments: (table, column, ON DELETE) of each reference to ``table``."""
    return ", ".join(f"'{child}', '{column}', '{ondelete or 'NO ACTION'}'"
                     for child, column, parent, ondelete in FOREIGN_KEYS if parent == table)


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, column, parent, _ in FOREIGN_KEYS:
        op.drop_constraint(op.f(f"fk_{table}_{column}_{parent}"), table, type_="foreignkey")
    op.execute(FUNCTIONS)
    for table in REFERRED:
        op.execute(f"CREATE TRIGGER {table}_deleted AFTER DELETE ON {table} REFERENCING OLD TABLE AS removed "
                   f"FOR EACH STATEMENT EXECUTE FUNCTION council_db_references({_referring(table)})")
        op.execute(f"CREATE TRIGGER {table}_truncated AFTER TRUNCATE ON {table} "
                   f"FOR EACH STATEMENT EXECUTE FUNCTION council_db_references({_referring(table)})")
        op.execute(f"CREATE TRIGGER {table}_id_fixed BEFORE UPDATE OF id ON {table} FOR EACH ROW "
                   "WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION council_db_fixed_id()")


def downgrade() -> None:
    """The foreign keys again, as 0001 and 0004 made them (checked against every stored row)."""
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in REFERRED:
        for trigger in ("deleted", "truncated", "id_fixed"):
            op.execute(f"DROP TRIGGER {table}_{trigger} ON {table}")
    op.execute("DROP FUNCTION council_db_references()")
    op.execute("DROP FUNCTION council_db_fixed_id()")
    for table, column, parent, ondelete in FOREIGN_KEYS:
        op.create_foreign_key(op.f(f"fk_{table}_{column}_{parent}"), table, parent, [column], ["id"],
                              ondelete=ondelete)
