"""A chat loop with a person in it: a tool that needs approval and a tool that asks a question.

``delete_file`` is wrapped with ``approval_required``: when the model calls it, nothing is
deleted until you approve (reject it with a reason and the model is told why). ``back_up``
asks which folder to back up with ``request_input``: the run pauses until you answer (an
empty answer cancels, and the tool takes its "cancelled" branch). Both pauses come back as
``response.input_requests``; the loop answers them and calls the client again with the
answers appended to the history.

The model is a small ``ScriptedChatClient`` and the files live in memory, so the sample runs
offline and deletes nothing real. Type messages at the ``you>`` prompt (``quit`` or an empty
line ends); with ``--yes`` it plays a fixed conversation, approving and answering everything.
"""

from __future__ import annotations

import argparse
import asyncio
import re
from collections import Counter
from collections.abc import Iterator

from agui_chat import (
    AIContent,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionInvokingChatClient,
    FunctionResultContent,
    InputRequestContent,
    InputResponseContent,
    InterruptRequestContent,
    InvalidResponseError,
    TextContent,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
    request_input,
)
from agui_chat._display import shown_call
from agui_chat.cli._prompts import approval_prompt
from agui_chat.testing import ScriptedChatClient

FILES = {"notes.txt", "draft.md", "todo.txt"}
FOLDERS = ["documents", "photos"]
RUNS: Counter[str] = Counter()
SCRIPT = ["Please delete notes.txt", "Now back up a folder"]


@approval_required
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The name of the file to delete.
    """
    RUNS["delete_file"] += 1
    if path not in FILES:
        return f"{path} does not exist"
    FILES.discard(path)
    print(f"  [tool] delete_file ran: {path} deleted")
    return f"deleted {path}"


@ai_function
def back_up() -> str:
    """Back up one folder; asks the person which one."""
    answer = request_input(
        "Which folder should I back up?",
        response_schema={"type": "string", "enum": FOLDERS},
    )
    if answer.cancelled:
        return "backup cancelled"
    RUNS["back_up"] += 1
    print(f"  [tool] back_up ran: {answer.payload} backed up")
    return f"backed up {answer.payload}"


def model(messages: list[ChatMessage], options: ChatOptions | None) -> str | list[AIContent]:
    """The scripted model: call a tool for a request it understands, then report the result."""
    last = messages[-1]
    if last.role == "tool":
        results = [str(c.result) for c in last.contents if isinstance(c, FunctionResultContent)]
        return f"Done: {'; '.join(results)}."
    text = last.text.lower()
    call_id = f"call_{len(messages)}"
    if "delete" in text:
        name = re.search(r"[\w-]+\.\w+", text)
        return [FunctionCallContent(call_id, "delete_file", {"path": name[0] if name else ""})]
    if "back up" in text or "backup" in text:
        return [FunctionCallContent(call_id, "back_up", {})]
    return "I can delete a file or back up a folder: try 'delete notes.txt' or 'back up'."


def show(messages: list[ChatMessage]) -> None:
    """Print what the run added to the conversation."""
    for message in messages:
        for content in message.contents:
            if isinstance(content, TextContent) and content.text:
                print(f"assistant> {content.text}")
            elif isinstance(content, FunctionCallContent):
                print(f"  [call] {shown_call(content.name, content.arguments).full}")
            elif isinstance(content, FunctionResultContent):
                print(f"  [result] {content.result}")


def ask(prompt: str) -> str | None:
    """A line from stdin, or ``None`` at the end of input."""
    try:
        return input(prompt).strip()
    except EOFError:
        return None


def answer(request: InputRequestContent, auto: bool) -> InputResponseContent:
    """The person's answer to one request: an approval decision or an answer to a question."""
    if isinstance(request, ToolApprovalRequestContent):
        call = request.tool_call
        # The agui-chat command asks the same way: the whole call, escaped (a long one says
        # so and offers [v]iew all); no answer at all rejects.
        shown = shown_call(call.name, call.arguments)
        prompt = f"  {approval_prompt(shown, allow_edits=False)}"
        if auto:
            print(f"{prompt}y (approved with --yes)")
            return request.create_response(True)
        choice = (ask(prompt) or "").lower()
        while choice in ("v", "view") and shown.cut:
            print(f"  {shown.full}")
            choice = (ask(prompt) or "").lower()
        if choice in ("y", "yes"):
            return request.create_response(True)
        return request.create_response(False, ask("  reason (optional): ") or None)
    assert isinstance(request, InterruptRequestContent)
    prompt = f"  {request.message} {FOLDERS} (empty cancels): "
    if auto:
        print(f"{prompt}{FOLDERS[0]} (answered with --yes)")
        return request.create_response(FOLDERS[0])
    while True:
        text = ask(prompt)
        if not text:
            return request.cancel()
        try:
            return request.create_response(text)
        except InvalidResponseError as exc:  # checked against the schema before it is sent
            print(f"  {exc}")


def user_lines(auto: bool) -> Iterator[str]:
    """What the person says: the fixed script with ``--yes``, otherwise stdin."""
    if auto:
        for line in SCRIPT:
            print(f"you> {line}")
            yield line
        return
    while True:
        typed = ask("you> ")
        if not typed or typed.lower() in ("quit", "exit"):
            return
        yield typed


async def chat(auto: bool) -> None:
    """The chat loop: send the history, answer any pause, repeat until the run finishes."""
    client = FunctionInvokingChatClient(ScriptedChatClient(model))
    options = ChatOptions(tools=[delete_file, back_up])
    history: list[ChatMessage] = []
    for line in user_lines(auto):
        history.append(ChatMessage("user", line))
        response = await client.get_response(history, options)
        while response.input_requests:
            show(response.messages)
            history += response.messages
            answers = [answer(r, auto) for r in response.input_requests]
            history.append(ChatMessage("user", list(answers)))
            response = await client.get_response(history, options)
        show(response.messages)
        history += response.messages
    print(f"delete_file ran {RUNS['delete_file']} time(s); files left: {', '.join(sorted(FILES))}")


def main(argv: list[str] | None = None) -> None:
    """Run the chat loop (``--yes``: the fixed conversation, everything approved)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--yes", action="store_true", help="approve and answer everything")
    asyncio.run(chat(parser.parse_args(argv).yes))


if __name__ == "__main__":
    main()
