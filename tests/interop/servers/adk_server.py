"""A Google ADK peer for the interop lane, run in its own virtualenv (tests/interop/peers/
adk.txt) by the fixtures: ``python adk_server.py PORT EFFECTS_FILE``.

It serves, through ag-ui-adk's FastAPI endpoint on 127.0.0.1:PORT, one ADK ``LlmAgent`` with
two tools of its own, ``get_weather(city)`` and ``delete_file(path)`` (the latter wrapped in
ADK's tool confirmation, ``require_confirmation=True``), and the client's own tools (ag-ui-adk's
``AGUIToolset``):

- ``/adk``: ag-ui-adk's default configuration: a confirmation ends the run as a plain success
  with a call to ADK's ``adk_request_confirmation`` (no interrupt outcome), answered with a
  tool message ``{"confirmed": true|false}``;
- ``/adk-outcome``: ``emit_interrupt_outcome=True``: the same pause as an AG-UI 1.0 interrupt
  outcome (``reason: "confirmation"``, no ``responseSchema``), answered through ``resume``.

The model is a google-adk ``BaseLlm`` scripted from what it receives (no network): it deletes
the ``*.txt`` files the user names, tells the weather in the city named after "weather in",
calls the client's ``pick_color`` when asked for a colour, and after tool results says
``Tool said: <results>``. Every run of a tool of its own appends one JSON line to
EFFECTS_FILE, so the tests count side effects.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncGenerator
from typing import Any

import uvicorn
from ag_ui_adk import ADKAgent, AGUIToolset, add_adk_fastapi_endpoint
from fastapi import FastAPI
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools import FunctionTool
from google.genai import types

PORT = int(sys.argv[1])
EFFECTS = sys.argv[2]


def effect(name: str, **arguments: Any) -> None:
    with open(EFFECTS, "a", encoding="utf-8") as out:
        out.write(json.dumps({"tool": name, **arguments}) + "\n")


def get_weather(city: str) -> str:
    """Tell the weather in a city."""
    effect("get_weather", city=city)
    return f"sunny in {city}"


def delete_file(path: str) -> str:
    """Delete a file."""
    effect("delete_file", path=path)
    return f"deleted {path}"


def _result_text(response: Any) -> str:
    """A function response as the model reads it: its ``result`` (ADK wraps a plain return in
    one, ag-ui-adk a client tool's result), else the whole response (a refusal's ``error``)."""
    if isinstance(response, dict) and "result" in response:
        return str(response["result"])
    return json.dumps(response, sort_keys=True)


def reply_to(contents: list[types.Content]) -> types.Content:
    """The scripted model's next turn."""
    last = contents[-1]
    parts = last.parts or []
    results = [p.function_response for p in parts if p.function_response is not None]
    if results:
        said = "; ".join(_result_text(r.response) for r in results)
        return types.Content(role="model", parts=[types.Part(text=f"Tool said: {said}")])
    text = " ".join(p.text for p in parts if p.text)
    calls: list[types.FunctionCall] = []
    if city := re.search(r"weather in (\w+)", text):
        calls.append(types.FunctionCall(name="get_weather", args={"city": city.group(1)}))
    for path in re.findall(r"[\w./-]+\.txt", text):
        calls.append(types.FunctionCall(name="delete_file", args={"path": path}))
    if "colour" in text or "color" in text:
        calls.append(types.FunctionCall(name="pick_color", args={"hint": "warm"}))
    if calls:
        for index, call in enumerate(calls):
            call.id = f"call_{call.name}_{index + 1}"
        return types.Content(role="model", parts=[types.Part(function_call=c) for c in calls])
    return types.Content(role="model", parts=[types.Part(text="Hello from ADK.")])


class ScriptedLlm(BaseLlm):
    """A google-adk model answering with ``reply_to`` (one complete turn, no network)."""

    model: str = "scripted"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        yield LlmResponse(content=reply_to(list(llm_request.contents)), turn_complete=True)


def build(name: str, *, emit_interrupt_outcome: bool) -> ADKAgent:
    agent = LlmAgent(
        name="assistant",
        model=ScriptedLlm(),
        instruction="Use the tools.",
        tools=[
            FunctionTool(get_weather),
            FunctionTool(delete_file, require_confirmation=True),
            AGUIToolset(),
        ],
    )
    return ADKAgent(
        adk_agent=agent,
        app_name=name,
        user_id="interop",
        use_in_memory_services=True,
        emit_interrupt_outcome=emit_interrupt_outcome,
    )


app = FastAPI()
add_adk_fastapi_endpoint(app, build("adk", emit_interrupt_outcome=False), "/adk")
add_adk_fastapi_endpoint(app, build("adk_outcome", emit_interrupt_outcome=True), "/adk-outcome")

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
