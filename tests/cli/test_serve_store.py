"""``agui-chat serve --store URL``: a store URL that does not parse is one line naming it
(never its password); with a signing key and no ``--store`` the served agent keeps its
consumed approvals in a SQLite file in the working directory, and with ``--store
postgresql://...`` in PostgreSQL, so a restarted ``serve`` does not run an approved tool
again."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_serve_command import serving

from agui_chat.cli import main
from postgres_server import PASSWORD, PostgresServer


def test_a_store_url_that_does_not_parse_is_one_line_without_the_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["serve", "--port", "0", "--store", "postgres://me:s3cret@db/1?bogus=1"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "--store" in err and "postgres://me:***@db/1" in err
    assert "s3cret" not in err


def _post(url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    response = httpx.post(url, json=body, headers={"accept": "text/event-stream"}, timeout=30)
    assert response.status_code == 200, response.text
    return [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]


def _body(run: str, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "threadId": "thread-1",
        "runId": run,
        "messages": messages,
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
        **extra,
    }


def _approve_once(url: str) -> tuple[dict[str, Any], list[str]]:
    """Pause a run of the demo agent at ``url``, approve it; the resume body and the results."""
    ask = {"id": "m1", "role": "user", "content": "Please clean up the draft report."}
    paused = _post(url + "/", _body("run-1", [ask]))
    [interrupt] = paused[-1]["outcome"]["interrupts"]
    calls = [e for e in paused if e["type"] == "TOOL_CALL_START"]
    args = "".join(e["delta"] for e in paused if e["type"] == "TOOL_CALL_ARGS")
    call = {
        "id": calls[0]["toolCallId"],
        "type": "function",
        "function": {"name": calls[0]["toolCallName"], "arguments": args},
    }
    history = [ask, {"id": "a1", "role": "assistant", "toolCalls": [call]}]
    answer = {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}
    body = _body("run-2", history, resume=[answer])
    first = _post(url + "/", body)
    return body, [e["content"] for e in first if e["type"] == "TOOL_CALL_RESULT"]


def test_with_a_key_the_default_store_is_a_sqlite_file_that_outlives_a_restart(
    tmp_path: Path,
) -> None:
    with serving(tmp_path) as (url, _):
        body, ran = _approve_once(url)
    assert len(ran) == 1
    # The file ``serve --help`` names as the default store.
    assert (tmp_path / "agui-chat-approvals.db").exists()
    with serving(tmp_path) as (url, _):
        again = _post(url + "/", {**body, "runId": "run-3"})
    # The restarted server knows the approval was used: it re-emits the kept result.
    assert [e["content"] for e in again if e["type"] == "TOOL_CALL_RESULT"] == ran
    assert not [e for e in again if e["type"] == "TEXT_MESSAGE_CONTENT"]


def test_a_postgres_store_outlives_a_restart_and_its_password_is_never_printed(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    """``serve --store postgresql://...``: the approval used before a restart is replayed,
    not run again, by the restarted server; its output never shows the password."""
    store = f"{postgres_server.url}?application_name=serve-{uuid.uuid4().hex[:8]}"
    with serving(tmp_path, "--store", store) as (url, first_output):
        body, ran = _approve_once(url)
    assert len(ran) == 1
    with serving(tmp_path, "--store", store) as (url, second_output):
        again = _post(url + "/", {**body, "runId": "run-3"})
    assert [e["content"] for e in again if e["type"] == "TOOL_CALL_RESULT"] == ran
    assert not (tmp_path / "agui-chat-approvals.db").exists()  # not the SQLite default
    assert PASSWORD not in first_output["stderr"] + second_output["stderr"]
