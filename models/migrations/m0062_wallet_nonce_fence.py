"""One in-flight transaction per (wallet, nonce): a partial unique index on wallet_transactions.

Two signers that both believe they hold a wallet's lease can never store two transactions
with the same nonce while either could still be mined. Settled rows (confirmed, failed,
replaced) keep their nonce as history and are outside the index; dropped rows have none.
"""

import peewee

INDEX = "wallet_transactions_in_flight_nonce"


def apply(database: peewee.Database, migrator: object) -> None:
    """Create the partial unique index (SQLite and PostgreSQL both support WHERE)."""
    database.execute_sql(
        f"CREATE UNIQUE INDEX IF NOT EXISTS {INDEX} ON wallet_transactions (wallet_id, nonce) "
        "WHERE status IN ('signed', 'broadcast') AND nonce IS NOT NULL")
