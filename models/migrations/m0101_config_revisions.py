"""A change counter on copy configs (issue 31): ``copy_configs.revision``, set from one
deployment-wide counter on every insert and update by a trigger, so the copy engine's
sweep reads only the configs written since its last look instead of every config."""

import peewee
from playhouse.migrate import migrate

POSTGRES = [
    "CREATE SEQUENCE IF NOT EXISTS copy_configs_revision_seq",
    "UPDATE copy_configs SET revision = nextval('copy_configs_revision_seq')",
    """CREATE OR REPLACE FUNCTION copy_configs_bump_revision() RETURNS trigger AS $$
       BEGIN
         NEW.revision := nextval('copy_configs_revision_seq');
         RETURN NEW;
       END $$ LANGUAGE plpgsql""",
    """CREATE TRIGGER copy_configs_revision BEFORE INSERT OR UPDATE ON copy_configs
       FOR EACH ROW EXECUTE FUNCTION copy_configs_bump_revision()""",
    # Fresh statistics: the sweep's range query is planned on the index from the start.
    "ANALYZE copy_configs",
]

# SQLite has no sequences: a one-row table stands for one (re-seeded from the configs if
# emptied). Its writers take turns, so a revision is never drawn twice nor committed out of
# order; the trigger's own update does not fire it again (recursive triggers are off by
# default), and it fires on any update, a save() of an instance's stale revision included.
_DRAW = """INSERT INTO copy_config_revision (id, value)
    VALUES (1, (SELECT COALESCE(MAX(revision), 0) + 1 FROM copy_configs))
    ON CONFLICT (id) DO UPDATE SET value = value + 1;"""
_SET = ("UPDATE copy_configs SET revision = (SELECT value FROM copy_config_revision)"
        " WHERE rowid = NEW.rowid;")
SQLITE = [
    "UPDATE copy_configs SET revision = rowid",
    "CREATE TABLE copy_config_revision (id INTEGER PRIMARY KEY CHECK (id = 1),"
    " value INTEGER NOT NULL)",
    f"CREATE TRIGGER copy_configs_revision_insert AFTER INSERT ON copy_configs"
    f" BEGIN {_DRAW} {_SET} END",
    f"CREATE TRIGGER copy_configs_revision_update AFTER UPDATE ON copy_configs"
    f" BEGIN {_DRAW} {_SET} END",
]


def apply(database: peewee.Database, migrator: object) -> None:
    """Add ``revision`` (indexed), number the existing configs and install the trigger."""
    migrate(migrator.add_column("copy_configs", "revision",
                                peewee.BigIntegerField(default=0)),
            migrator.add_index("copy_configs", ("revision",), False))
    postgres = isinstance(database, peewee.PostgresqlDatabase)
    for statement in POSTGRES if postgres else SQLITE:
        database.execute_sql(statement)
