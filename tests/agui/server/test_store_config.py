"""Which approval store a server uses: a store or a URL (``memory://``, ``sqlite:///path``,
``redis://host:port/db``); a fixed signing key with no shared store refused at construction
(saying why and what to pass); a URL that does not parse named without its password."""

from __future__ import annotations

from pathlib import Path

import pytest
from server_support import (
    SIGNING_KEY,
    approve,
    scripted,
    user,
)

from agui_chat import ApprovalStoreError, FunctionCallContent
from agui_chat.agui import SIGNING_KEY_ENV, AGUIServer
from agui_chat.stores import (
    InMemoryApprovalStore,
    RedisApprovalStore,
    SQLiteApprovalStore,
    store_from_url,
)
from agui_server import agui_server
from agui_streams import SideEffects


def test_a_fixed_key_without_a_shared_store_is_refused_saying_why_and_what_to_pass() -> None:
    with pytest.raises(ValueError) as refused:
        AGUIServer(scripted(), signing_key=SIGNING_KEY)
    message = str(refused.value)
    assert "fixed signing key" in message
    assert "run its tool twice" in message
    for remedy in ("sqlite:///", "redis://", "InMemoryApprovalStore()"):
        assert remedy in message


def test_a_key_from_the_environment_is_fixed_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SIGNING_KEY_ENV, "environment-key-0123456789abcdef")
    with pytest.raises(ValueError, match="fixed signing key"):
        AGUIServer(scripted())


def test_memory_passed_explicitly_is_accepted_and_the_ephemeral_key_keeps_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = InMemoryApprovalStore()
    assert (
        AGUIServer(scripted(), signing_key=SIGNING_KEY, approval_store=store).approval_store
        is store
    )
    explicit = AGUIServer(scripted(), signing_key=SIGNING_KEY, approval_store="memory://")
    assert isinstance(explicit.approval_store, InMemoryApprovalStore)
    monkeypatch.delenv(SIGNING_KEY_ENV, raising=False)
    assert isinstance(AGUIServer(scripted()).approval_store, InMemoryApprovalStore)


def test_store_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(store_from_url("memory://"), InMemoryApprovalStore)
    absolute = store_from_url(f"sqlite:///{tmp_path}/a.db")
    assert isinstance(absolute, SQLiteApprovalStore) and absolute.path == f"{tmp_path}/a.db"
    monkeypatch.chdir(tmp_path)
    relative = store_from_url("sqlite:///approvals.db")
    assert isinstance(relative, SQLiteApprovalStore) and relative.path == "approvals.db"
    redis = store_from_url("redis://:s3cret@127.0.0.1:6390/2")
    assert isinstance(redis, RedisApprovalStore)
    assert redis.url == "redis://:***@127.0.0.1:6390/2"


@pytest.mark.parametrize(
    "url",
    [
        "mysql://user:s3cret@db:5432/x",
        "sqlite://",
        "memory://somewhere",
        "redis://user:s3cret@[::1:6379/0",
        "approvals.db",
    ],
)
def test_a_url_that_does_not_parse_is_named_without_its_password(url: str) -> None:
    with pytest.raises(ValueError) as refused:
        AGUIServer(scripted(), signing_key=SIGNING_KEY, approval_store=url)
    assert "s3cret" not in str(refused.value)
    assert "approval store URL" in str(refused.value)
    assert "sqlite:///" in str(refused.value)  # says which forms work


async def test_a_store_that_cannot_be_opened_refuses_the_resume_and_names_it(
    tmp_path: Path,
) -> None:
    effects = SideEffects()
    url = f"sqlite:///{tmp_path}/missing-dir/approvals.db"
    agent = agui_server(
        scripted([FunctionCallContent("c1", "delete_file", {"path": "a.txt"})], "Deleted."),
        tools=[effects.delete_file()],
        approval_store=url,
    )
    _, history, (interrupt,) = await agent.pause(user("delete a.txt"))
    events = await agent.resume(history, approve(interrupt))
    assert [e["type"] for e in events] == ["RUN_ERROR"]
    # a directory that does not exist is the deployment's mistake: retrying will not help
    assert events[0]["code"] == "APPROVAL_STORE_MISCONFIGURED"
    assert "retryAfter" not in events[0]
    assert "missing-dir" not in events[0]["message"]  # the client is not told the path
    assert effects.count("delete_file") == 0
    with pytest.raises(ApprovalStoreError, match="missing-dir"):
        await agent.app.approval_store.claim("k", expires_at=None)


def test_a_sqlite_url_may_ask_for_full_durability(tmp_path: Path) -> None:
    full = store_from_url(f"sqlite:///{tmp_path}/a.db?synchronous=FULL")
    assert isinstance(full, SQLiteApprovalStore) and full.synchronous == "FULL"
    normal = store_from_url(f"sqlite:///{tmp_path}/a.db")
    assert isinstance(normal, SQLiteApprovalStore) and normal.synchronous == "NORMAL"
    with pytest.raises(ValueError, match="synchronous"):
        store_from_url(f"sqlite:///{tmp_path}/a.db?journal=off")
