"""Governance in process: who may answer an approval, a remembered approval, and the record.

``deploy`` needs four eyes: only someone with the ``ops`` role may answer for it, and never
the person who asked (``approval_required(approvers="ops", distinct_approver=True)``). Bob
asks for a deployment; his own approval, Dave's (no ``ops`` role) and an answer from nobody
are each refused with their code, using nothing up, so Alice (``ops``) can still approve it.

``write_file`` lets an approval be remembered (``allow_remember=True``): Alice approves it
with ``remember="thread"`` for ten minutes, the same call in the same conversation then runs
without asking, another conversation still asks, and once the grant is revoked the first one
asks again too. The tool loop keeps the audit trail in its ``approval_store``; the sample
prints it and verifies its hash chain.

The model is a small ``ScriptedChatClient`` and the store lives in memory, so the sample runs
offline: ``python samples/governance.py``.
"""

from __future__ import annotations

import asyncio
import itertools
from datetime import timedelta

from agui_chat import (
    AIContent,
    ApproverNotAllowedError,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FunctionCallContent,
    FunctionInvokingChatClient,
    FunctionResultContent,
    Principal,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
    approval_required,
)
from agui_chat.stores import InMemoryApprovalStore
from agui_chat.testing import ScriptedChatClient

ALICE = Principal("alice", name="Alice", roles=frozenset({"ops"}))
BOB = Principal("bob", name="Bob", roles=frozenset({"dev"}))
DAVE = Principal("dave", name="Dave", roles=frozenset({"dev"}))
CALL_IDS = itertools.count(1)


@approval_required(approvers="ops", distinct_approver=True)
def deploy(service: str) -> str:
    """Deploy a service to production.

    Args:
        service: The service to deploy.
    """
    return f"deployed {service}"


@approval_required(allow_remember=True)
def write_file(path: str) -> str:
    """Write a file.

    Args:
        path: The file to write.
    """
    return f"wrote {path}"


def model(messages: list[ChatMessage], options: ChatOptions | None) -> str | list[AIContent]:
    """Calls ``deploy`` or ``write_file`` on the last word of the request; reports the result."""
    last = messages[-1]
    if last.role == "tool":
        results = [str(c.result) for c in last.contents if isinstance(c, FunctionResultContent)]
        return f"Done: {'; '.join(results)}."
    verb, target = last.text.split()[0], last.text.split()[-1]
    tool, argument = ("deploy", "service") if verb == "deploy" else ("write_file", "path")
    return [FunctionCallContent(f"call_{next(CALL_IDS)}", tool, {argument: target})]


store = InMemoryApprovalStore()
client = FunctionInvokingChatClient(ScriptedChatClient(model), approval_store=store)


async def ask(text: str, thread: str) -> tuple[list[ChatMessage], ChatResponse]:
    """A new request in conversation ``thread``: the history so far and the response."""
    options = ChatOptions(tools=[deploy, write_file], conversation_id=thread)
    history = [ChatMessage("user", text)]
    response = await client.get_response(history, options)
    return [*history, *response.messages], response


async def send(
    history: list[ChatMessage], answer: ToolApprovalResponseContent, thread: str
) -> ChatResponse:
    """Send the person's answer to the pause at the end of ``history``."""
    options = ChatOptions(tools=[deploy, write_file], conversation_id=thread)
    return await client.get_response([*history, ChatMessage("user", [answer])], options)


async def four_eyes() -> None:
    """Bob asks for a deployment; only someone else with the ops role may approve it."""
    history, paused = await ask("deploy web", "t-deploy")
    (request,) = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    request.requester = BOB  # in process, your application says who asked
    for who in (BOB, DAVE, None):
        try:
            await send(history, request.create_response(True, approver=who), "t-deploy")
        except ApproverNotAllowedError as refused:  # nothing was used up
            print(f"refused {who.id if who else 'nobody'}: {refused.code}")
    done = await send(history, request.create_response(True, approver=ALICE), "t-deploy")
    print(f"approved by alice: {done.text}")


async def remembered() -> None:
    """Alice approves a write once and asks not to be asked again in this conversation."""
    history, paused = await ask("write notes.txt", "t1")
    (request,) = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent) and request.allow_remember
    answer = request.create_response(
        True, approver=ALICE, remember="thread", remember_for=timedelta(minutes=10)
    )
    await send(history, answer, "t1")
    (grant,) = await store.grants(thread_id="t1")
    print("grant:", grant.describe('write_file(path="notes.txt")'))

    _, again = await ask("write notes.txt", "t1")  # covered: runs without a pause
    print(f"same call, same conversation: {again.text}")
    _, elsewhere = await ask("write notes.txt", "t2")
    print(f"same call, another conversation: asks ({len(elsewhere.input_requests)} request)")

    print(f"revoked: {await store.revoke_grant(grant.id)}")
    history, paused = await ask("write notes.txt", "t1")
    (request,) = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    print(f"after revoking: asks ({len(paused.input_requests)} request)")
    await send(history, request.create_response(False, "not again", approver=ALICE), "t1")


async def audit_trail() -> None:
    """Print the record of every decision and verify its hash chain."""
    async for record in store.audit():
        line = f"#{record.seq} {record.tool} {record.arguments} {record.decision}"
        if record.approver is not None:
            line += f" by {record.approver.id}"
        if record.requester is not None:
            line += f", asked by {record.requester.id}"
        if record.grant_id is not None:
            line += ", on a grant"
        if record.reason is not None:
            line += f", reason {record.reason!r}"
        print(f"{line} -> {record.outcome or 'did not run'}")
    print(f"verified {await store.verify_audit()} records")


async def main() -> None:
    await four_eyes()
    await remembered()
    await audit_trail()


if __name__ == "__main__":
    asyncio.run(main())
