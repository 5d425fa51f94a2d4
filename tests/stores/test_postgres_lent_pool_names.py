"""A pool lent to ``PostgresApprovalStore`` is named in its errors by what the pool's
connection string says (never a password), and only that: libpq's defaults for what it
leaves out are not guessed. No database is needed: the pools are never opened."""

from __future__ import annotations

import pytest
from psycopg_pool import AsyncConnectionPool

from agui_chat.stores import PostgresApprovalStore


@pytest.mark.parametrize(
    ("conninfo", "named"),
    [
        ("", "postgresql:///"),
        ("dbname=agents", "postgresql:///agents"),
        ("host=db.example", "postgresql://db.example/"),
        ("port=5433", "postgresql://:5433/"),
        ("host=db.example port=5433 dbname=agents", "postgresql://db.example:5433/agents"),
        ("host=db.example user=agui password=pw-LEAK", "postgresql://db.example/"),
        ("not a conninfo ===", "postgresql://?"),
    ],
)
async def test_a_lent_pool_is_named_by_what_its_conninfo_says_and_nothing_more(
    conninfo: str, named: str
) -> None:
    """A lent pool's name in errors has only the parts its connection string gives (libpq's
    defaults are left out), and ``postgresql://?`` when the string cannot be read."""
    pool = AsyncConnectionPool(conninfo, open=False)
    store = PostgresApprovalStore(pool)
    assert store.url == named
    assert repr(store) == f"PostgresApprovalStore({named!r}, table='agui_chat_approvals')"
    await store.aclose()
    await pool.close()
