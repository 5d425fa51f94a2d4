"""``agui-chat serve --store URL`` names the store in its banner and in every line it logs
(the store down at start, a run against it) with the URL's password hidden, whichever way
the URL gives it (percent-decoded option names as libpq and redis-py read them, the
userinfo), against a real PostgreSQL and against a closed port. Through the real command, in
a child process."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from test_serve_command import post_run, serving

from postgres_server import PASSWORD, PostgresServer

SECRET = "Zq-SECRET-7731"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_password_libpq_reads_from_an_encoded_option_is_never_printed(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    address = f"127.0.0.1:{postgres_server.port}/postgres"
    store = f"postgresql://agui@{address}?passw%6Frd={PASSWORD}"
    with serving(tmp_path, "--store", store) as (url, output):
        events = post_run(url, "hello")
    assert events[-1]["type"] == "RUN_FINISHED"  # the store (and its password) worked
    assert f"approval store: postgresql://agui@{address}?passw%6Frd=***" in output["stderr"]
    assert PASSWORD not in output["stderr"]


@pytest.mark.parametrize(
    "store",
    [
        "postgresql://agui@127.0.0.1:{port}/postgres?%70assword={secret}",
        "postgresql://agui:{secret}@127.0.0.1:{port}/postgres?sslpassword={secret}",
        "redis://:{secret}@127.0.0.1:{port}/0",
        "redis://127.0.0.1:{port}/0?passw%6Frd={secret}",
    ],
)
def test_a_store_that_is_down_is_named_without_its_password(tmp_path: Path, store: str) -> None:
    port = closed_port()
    with serving(tmp_path, "--store", store.format(port=port, secret=SECRET)) as (url, output):
        post_run(url, "hello")
    assert f"127.0.0.1:{port}" in output["stderr"]
    assert "cannot be reached" in output["stderr"]  # the store was named while down
    assert SECRET not in output["stderr"]
