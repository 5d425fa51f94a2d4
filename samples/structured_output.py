"""Typed structured output: ask for a pydantic model and get a validated instance back.

``get_response(..., response_format=Cities, retries=1)`` sends the strict JSON schema of
``Cities`` to the model and returns a ``ChatResponse[Cities]`` whose ``.value`` is checked by
pydantic (and typed for mypy). The offline model first answers in prose, so the reply fails
validation and the errors go back once for a repair; the sample prints each reply and the
repair it sent, then the typed result. With ``--base-url URL --model NAME`` it
asks any OpenAI-compatible server instead (``--api responses`` for the Responses API).

    python samples/structured_output.py
    python samples/structured_output.py --base-url http://127.0.0.1:11434/v1 --model llama3.2
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from pydantic import BaseModel, Field

from agui_chat import (
    ChatClient,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    DelegatingChatClient,
    StructuredOutputError,
)
from agui_chat.testing import ScriptedChatClient

QUESTION = "Name the three largest cities of France, with their populations."


class City(BaseModel):
    name: str
    population: int = Field(description="inhabitants of the city proper")


class Cities(BaseModel):
    cities: list[City]


def offline_model() -> ScriptedChatClient:
    """A model that answers in prose first, then (told what was wrong) in JSON."""

    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        if "does not match the required JSON schema" not in messages[-1].text:
            return "Paris (2.1 million), Marseille (870,000) and Lyon (520,000)."
        cities = [("Paris", 2102650), ("Marseille", 873076), ("Lyon", 522250)]
        return json.dumps({"cities": [{"name": n, "population": p} for n, p in cities]})

    return ScriptedChatClient(reply)


class ShowAttempts(DelegatingChatClient):
    """Prints every reply of the model, and the repair sent back after one that did not
    validate, so the repair is seen happening."""

    replies = 0

    async def _get_response(self, messages: Any, options: ChatOptions | None) -> ChatResponse:
        if self.replies:  # the structured-output loop sent the errors back: show them
            print("repair sent:", messages[-1].text.replace("\n", "\n    "))
        response = await super()._get_response(messages, options)
        self.replies += 1
        print(f"reply {self.replies}: {response.text}")
        return response


def model_from(args: argparse.Namespace) -> ChatClient:
    if args.base_url is None:
        return offline_model()
    from agui_chat.openai import OpenAIChatClient, OpenAIResponsesChatClient

    kind = OpenAIResponsesChatClient if args.api == "responses" else OpenAIChatClient
    return kind(args.model, base_url=args.base_url, api_key=args.api_key)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="an OpenAI-compatible server, e.g. .../v1")
    parser.add_argument("--model", default="gpt-4o-mini", help="the model name to ask for")
    parser.add_argument("--api", choices=("chat", "responses"), default="chat")
    parser.add_argument("--api-key", help="the key, if the server needs one")
    args = parser.parse_args()
    model = ShowAttempts(model_from(args))
    try:
        response = await model.get_response(QUESTION, response_format=Cities, retries=1)
    except StructuredOutputError as exc:
        print(f"the model's reply did not validate: {exc.errors}")
        return 1
    finally:
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()
    print(f"valid after {model.replies} replies:")
    for city in response.value.cities:  # a Cities instance, typed for mypy
        print(f"{city.name}: {city.population:,} people")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
