"""A question naming a tool call no stream showed (the model made the id up): its answer
still reaches the model, as a question no tool asked, and is never silently dropped."""

from __future__ import annotations

from typing import Any

from server_support import interrupts, outcome, scripted

from agui_chat import ChatMessage, ChatOptions, InterruptRequestContent, InterruptResponseContent
from agui_server import agui_server
from agui_streams import answer, history_from, run_input, user


async def test_a_question_about_a_call_no_one_made_reaches_the_model_with_its_answer() -> None:
    seen: list[list[ChatMessage]] = []

    def second(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
        seen.append(messages)
        return "Thanks."

    request = InterruptRequestContent("q1", message="Which colour?", tool_call_id="ghost")
    agent = agui_server(scripted([request], second))
    first = await agent.post(run_input(user("ask me")))
    (interrupt,) = interrupts(first)
    history = [user("ask me"), *history_from(first)]
    done = await agent.resume(history, answer(interrupt, {"colour": "blue"}))
    assert outcome(done) == {"type": "success"}
    assert len(seen) == 1  # the model was asked again, with the answer
    answers = [c for m in seen[0] for c in m.contents if isinstance(c, InterruptResponseContent)]
    assert [a.payload for a in answers] == [{"colour": "blue"}]
