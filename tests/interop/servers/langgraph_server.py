"""A LangGraph peer for the interop lane, run in its own virtualenv (tests/interop/peers/
langgraph.txt) by the fixtures: ``python langgraph_server.py PORT EFFECTS_FILE``.

It serves, through ag-ui-langgraph's FastAPI endpoint on 127.0.0.1:PORT:

- ``/graph``: a graph of our own in ag-ui-langgraph's default configuration (the legacy
  ``on_interrupt`` CUSTOM event, no outcome); ``/graph-outcome``: the same graph with the
  AG-UI 1.0 interrupt outcome on. The model asks to delete files (one ``review`` branch per
  call, each pausing with ``interrupt()`` naming the call) or for the weather (the tool asks
  "Which city?" with ``interrupt()``).
- ``/hitl`` and ``/hitl-batched``: a LangChain agent (``create_agent``) whose ``delete_file``
  is gated by ``HumanInTheLoopMiddleware`` (``per_call`` and the default ``batched`` mode),
  in ag-ui-langgraph's default configuration.

Models are scripted from what they receive (no network). Every tool run appends one JSON
line to EFFECTS_FILE, so the tests count side effects.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any

import uvicorn
from ag_ui_langgraph import LangGraphAgent, add_langgraph_fastapi_endpoint
from fastapi import FastAPI
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Send, interrupt

PORT = int(sys.argv[1])
EFFECTS = sys.argv[2]


def effect(name: str, **arguments: Any) -> None:
    with open(EFFECTS, "a", encoding="utf-8") as out:
        out.write(json.dumps({"tool": name, **arguments}) + "\n")


def reply_to(messages: list[BaseMessage]) -> AIMessage:
    """The scripted model: delete what the user names, ask for the weather, or repeat the
    tool results it got."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        results = []
        for message in reversed(messages):
            if not isinstance(message, ToolMessage):
                break
            results.insert(0, str(message.content))
        return AIMessage("Tool said: " + "; ".join(results))
    text = str(last.content)
    if "weather" in text:
        return AIMessage("", tool_calls=[{"id": "call_w1", "name": "get_weather", "args": {}}])
    paths = re.findall(r"[\w./-]+\.txt", text)
    if paths:
        calls = [
            {"id": f"call_del_{i + 1}", "name": "delete_file", "args": {"path": p}}
            for i, p in enumerate(paths)
        ]
        return AIMessage("", tool_calls=calls)
    return AIMessage("Hello from LangGraph.")


class ScriptedChatModel(BaseChatModel):
    """A LangChain chat model answering with ``reply_to``."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=reply_to(messages))])

    def _stream(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        # As providers stream: a call's id and name first, then its argument text.
        reply = reply_to(messages)
        if not reply.tool_calls:
            yield ChatGenerationChunk(message=AIMessageChunk(content=reply.content))
            return
        for i, call in enumerate(reply.tool_calls):
            for chunk in (
                {"id": call["id"], "name": call["name"], "args": "", "index": i},
                {"id": None, "name": None, "args": json.dumps(call["args"]), "index": i},
            ):
                yield ChatGenerationChunk(
                    message=AIMessageChunk(content="", tool_call_chunks=[chunk])
                )


model = ScriptedChatModel()


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    effect("delete_file", path=path)
    return f"deleted {path}"


@tool
def get_weather() -> str:
    """Tell the weather; asks the user which city."""
    answer = interrupt(
        {
            "message": "Which city?",
            "responseSchema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        }
    )
    if isinstance(answer, dict) and answer.get("__agui_cancelled__"):
        return "no city given"
    city = answer["city"] if isinstance(answer, dict) else str(answer)
    effect("get_weather", city=city)
    return f"sunny in {city}"


# -- the graph of our own ----------------------------------------------------------------


def agent_node(state: MessagesState) -> dict[str, Any]:
    return {"messages": [model.invoke(state["messages"])]}


def route(state: MessagesState) -> Any:
    last = state["messages"][-1]
    if not isinstance(last, AIMessage) or not last.tool_calls:
        return END
    if last.tool_calls[0]["name"] == "get_weather":
        return "weather"
    return [Send("review", {"call": c}) for c in last.tool_calls]


def review(state: dict[str, Any]) -> dict[str, Any]:
    """One gated call: pause naming it, run it only when approved."""
    call = state["call"]
    answer = interrupt({"message": f"Approve {call['name']}?", "toolCallId": call["id"]})
    approved = isinstance(answer, dict) and answer.get("approved") is True
    if approved:
        arguments = answer.get("editedArgs") or call["args"]
        content = delete_file.invoke(arguments)
    else:
        reason = answer.get("reason") if isinstance(answer, dict) else None
        content = f"rejected{': ' + reason if reason else ''}"
    return {"messages": [ToolMessage(content, tool_call_id=call["id"])]}


def weather(state: MessagesState) -> dict[str, Any]:
    call = state["messages"][-1].tool_calls[0]
    return {"messages": [ToolMessage(get_weather.invoke({}), tool_call_id=call["id"])]}


def build_graph() -> Any:
    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent_node)
    graph.add_node("review", review)
    graph.add_node("weather", weather)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["review", "weather", END])
    graph.add_edge("review", "agent")
    graph.add_edge("weather", "agent")
    return graph.compile(checkpointer=InMemorySaver())


def build_hitl(mode: str) -> Any:
    return create_agent(
        model,
        tools=[delete_file],
        middleware=[
            HumanInTheLoopMiddleware(interrupt_on={"delete_file": True}, interrupt_mode=mode)
        ],
        checkpointer=InMemorySaver(),
    )


app = FastAPI()
add_langgraph_fastapi_endpoint(app, LangGraphAgent(name="graph", graph=build_graph()), "/graph")
add_langgraph_fastapi_endpoint(
    app,
    LangGraphAgent(name="graph-outcome", graph=build_graph(), emit_interrupt_outcome=True),
    "/graph-outcome",
)
add_langgraph_fastapi_endpoint(
    app, LangGraphAgent(name="hitl", graph=build_hitl("per_call")), "/hitl"
)
add_langgraph_fastapi_endpoint(
    app, LangGraphAgent(name="hitl-batched", graph=build_hitl("batched")), "/hitl-batched"
)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
