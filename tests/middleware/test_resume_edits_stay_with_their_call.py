"""An approved edit changes the arguments of its own call only: a call of the same batch
resumed by a question runs with its own arguments, and the model sees each call as it ran."""

from __future__ import annotations

from loop_support import Ask, call, resume, scripted, seen

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    FunctionInvokingChatClient,
    InterruptRequestContent,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
    request_input,
)


async def test_an_edit_of_a_gated_call_does_not_change_the_questioned_call_beside_it(
    ask: Ask,
) -> None:
    runs: list[str] = []

    @ai_function
    def deploy(env: str) -> str:
        """Deploy."""
        build = request_input("Which build?", key="build")
        runs.append(f"deploy {env} {build.payload}")
        return f"deployed {env}"

    @approval_required
    def delete_file(path: str) -> str:
        """Delete a file."""
        runs.append(f"delete {path}")
        return f"deleted {path}"

    options = ChatOptions(tools=[deploy, delete_file])
    model = scripted(
        [call("c1", "deploy", env="prod"), call("c2", "delete_file", path="/tmp/old")], "done"
    )
    client = FunctionInvokingChatClient(model)
    history = [ChatMessage("user", "ship")]
    paused = await ask(client, history, options)
    assert paused.finish_reason == ChatFinishReason.INPUT_REQUIRED
    [approval] = [r for r in paused.input_requests if isinstance(r, ToolApprovalRequestContent)]
    [question] = [r for r in paused.input_requests if isinstance(r, InterruptRequestContent)]
    assert runs == []

    answers = [
        approval.create_response(True, edited_arguments={"path": "/tmp/older"}),
        question.create_response(4),
    ]
    final = await ask(client, resume(history, paused, *answers), options)

    assert sorted(runs) == ["delete /tmp/older", "deploy prod 4"]
    assert final.text.endswith("done")
    assert len(model.calls) == 2
    shown = [line for line in seen(model) if line.startswith("assistant")]
    assert shown == [
        'assistant: call c1 deploy {"env": "prod"}',
        'assistant: call c2 delete_file {"path": "/tmp/older"}',
    ]
