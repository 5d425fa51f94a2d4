"""An approval answer over the wire is read in full by the one payload model, or refused.

The attack: an edit sent under a key the server does not read (``edited_args``,
``editedArguments``, ``edited_action``, ``arguments``, ``EditedArgs``) used to run the
*unedited* call. Now each is a ``RUN_ERROR`` ``RESUME_UNKNOWN_PAYLOAD_KEY`` before anything
runs or is claimed: the tool never ran (neither call), and the same approval, answered
correctly afterwards, runs exactly once. Values of the wrong type are ``RESUME_INVALID_PAYLOAD``
the same way."""

from __future__ import annotations

from typing import Any

import pytest
from server_support import (
    SIGNING_KEY,
    SideEffects,
    approve,
    history_from,
    interrupts,
    outcome,
    refused_before_the_run,
    run_agui,
    run_input,
    scripted,
    user,
)

from agui_chat import FunctionCallContent
from agui_chat.agui import AGUIServer
from agui_chat.stores import InMemoryApprovalStore

MISPLACED_EDITS = ["edited_args", "editedArguments", "edited_action", "arguments", "EditedArgs"]


def delete_app(fx: SideEffects, *paths: str, allow_edits: bool = True) -> AGUIServer:
    """A server whose model asks to delete ``paths`` (one gated call each), then says Done."""
    calls = [
        FunctionCallContent(f"c{n}", "delete_file", {"path": p})
        for n, p in enumerate(paths or ("a.txt",), 1)
    ]
    return AGUIServer(
        scripted(calls, "Done."),
        tools=[fx.delete_file(allow_edits=allow_edits)],
        signing_key=SIGNING_KEY,
        approval_store=InMemoryApprovalStore(),
    )


async def paused(app: AGUIServer) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    first = await run_agui(app, run_input(user("go")))
    return [user("go"), *history_from(first)], interrupts(first)


def resolved(interrupt: dict[str, Any], payload: Any) -> dict[str, Any]:
    return {"interruptId": interrupt["id"], "status": "resolved", "payload": payload}


@pytest.mark.parametrize("key", MISPLACED_EDITS)
async def test_an_edit_under_another_key_runs_nothing_and_consumes_nothing(key: str) -> None:
    fx = SideEffects()
    app = delete_app(fx)
    history, (interrupt,) = await paused(app)
    edit = resolved(interrupt, {"approved": True, key: {"path": "b.txt"}})
    events = await run_agui(app, run_input(*history, run="r2", resume=[edit]))
    error = refused_before_the_run(events, "RESUME_UNKNOWN_PAYLOAD_KEY")
    assert error["message"] == (
        f"resume[0].payload has unknown key {key!r}; expected "
        "{approved, reason?, editedArgs?, remember?} (edited arguments go under 'editedArgs')"
    )
    assert fx.count("delete_file") == 0  # neither the edited nor the unedited call ran
    # Nothing was claimed: the same approval, answered correctly, runs once, as edited.
    right = approve(interrupt, editedArgs={"path": "b.txt"})
    done = await run_agui(app, run_input(*history, run="r3", resume=[right]))
    assert outcome(done) == {"type": "success"}
    assert fx.runs["delete_file"] == [{"path": "b.txt"}]
    again = await run_agui(app, run_input(*history, run="r4", resume=[right]))
    assert outcome(again) == {"type": "success"}
    assert fx.count("delete_file") == 1  # a replay runs nothing twice


@pytest.mark.parametrize("key", MISPLACED_EDITS)
async def test_an_unknown_key_is_refused_where_editing_was_not_offered(key: str) -> None:
    """No edits offered: the stray key is still refused, not ignored into a plain approval."""
    fx = SideEffects()
    app = delete_app(fx, allow_edits=False)
    history, (interrupt,) = await paused(app)
    edit = resolved(interrupt, {"approved": True, key: {"path": "/etc/passwd"}})
    events = await run_agui(app, run_input(*history, run="r2", resume=[edit]))
    refused_before_the_run(events, "RESUME_UNKNOWN_PAYLOAD_KEY")
    assert fx.count("delete_file") == 0
    done = await run_agui(app, run_input(*history, run="r3", resume=[approve(interrupt)]))
    assert outcome(done) == {"type": "success"}
    assert fx.runs["delete_file"] == [{"path": "a.txt"}]


async def test_one_bad_entry_of_a_pause_runs_none_of_its_calls() -> None:
    """The well-formed answer of the same pause is not run or claimed either."""
    fx = SideEffects()
    app = delete_app(fx, "a.txt", "c.txt")
    history, (first, second) = await paused(app)
    bad = resolved(second, {"approved": True, "edited_args": {"path": "b.txt"}})
    events = await run_agui(app, run_input(*history, run="r2", resume=[approve(first), bad]))
    error = refused_before_the_run(events, "RESUME_UNKNOWN_PAYLOAD_KEY")
    assert error["message"].startswith("resume[1].payload has unknown key 'edited_args'")
    assert fx.count("delete_file") == 0
    honest = [approve(first), approve(second, editedArgs={"path": "b.txt"})]
    done = await run_agui(app, run_input(*history, run="r3", resume=honest))
    assert outcome(done) == {"type": "success"}
    assert sorted(r["path"] for r in fx.runs["delete_file"]) == ["a.txt", "b.txt"]


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (
            {"approved": "true"},
            "resume[0].payload.approved must be a boolean (true or false), got string",
        ),
        (
            {"approved": 1},
            "resume[0].payload.approved must be a boolean (true or false), got number",
        ),
        ({"approved": False, "reason": 7}, "resume[0].payload.reason must be a string, got number"),
        (
            {"approved": False, "reason": ["no"]},
            "resume[0].payload.reason must be a string, got array",
        ),
        (
            {"approved": True, "editedArgs": "path=b.txt"},
            "resume[0].payload.editedArgs must be an object, got string",
        ),
        (
            {"approved": True, "editedArgs": [{"path": "b.txt"}]},
            "resume[0].payload.editedArgs must be an object, got array",
        ),
        (
            {"approved": True, "editedArgs": None},
            "resume[0].payload.editedArgs must be an object, got null",
        ),
    ],
)
async def test_a_value_of_the_wrong_type_runs_nothing_and_consumes_nothing(
    payload: dict[str, Any], message: str
) -> None:
    fx = SideEffects()
    app = delete_app(fx)
    history, (interrupt,) = await paused(app)
    events = await run_agui(
        app, run_input(*history, run="r2", resume=[resolved(interrupt, payload)])
    )
    assert refused_before_the_run(events, "RESUME_INVALID_PAYLOAD")["message"] == message
    assert fx.count("delete_file") == 0
    done = await run_agui(app, run_input(*history, run="r3", resume=[approve(interrupt)]))
    assert outcome(done) == {"type": "success"}
    assert fx.runs["delete_file"] == [{"path": "a.txt"}]


async def test_the_interrupt_offers_exactly_the_keys_the_server_reads() -> None:
    """What the approval's ``responseSchema`` names is what the payload model takes."""
    fx = SideEffects()
    _, (interrupt,) = await paused(delete_app(fx))
    assert set(interrupt["responseSchema"]["properties"]) == {"approved", "reason", "editedArgs"}
    assert interrupt["responseSchema"]["required"] == ["approved"]
