"""``get_response(..., response_format=Model)`` on our clients and
``get_structured_response(client, ..., response_format=Model)`` on any ``ChatClient`` are typed
``ChatResponse[Model]`` for mypy; plain calls stay ``ChatResponse[Any]``; the protocol itself
takes no ``response_format``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

SNIPPET = textwrap.dedent(
    """
    from pydantic import BaseModel
    from agui_chat import (
        ChatClient, ChatResponse, FunctionInvokingChatClient, get_structured_response
    )
    from agui_chat.testing import ScriptedChatClient

    class City(BaseModel):
        name: str

    async def main(client: ChatClient) -> None:
        typed = await get_structured_response(client, "hi", response_format=City)
        reveal_type(typed.value)
        listed = await FunctionInvokingChatClient(client).get_response(
            "hi", response_format=list[int], retries=2
        )
        reveal_type(listed.value)
        plain = await ScriptedChatClient(lambda m, o: "x").get_response("hi")
        reveal_type(plain)
        kept: ChatResponse = plain
        await client.get_response("hi", response_format=City)  # E: the protocol has none
    """
)


def test_mypy_sees_the_model_type(tmp_path: Path) -> None:
    source = tmp_path / "snippet.py"
    source.write_text(SNIPPET)
    cache = Path(__file__).resolve().parents[2] / ".mypy_cache"
    out, err, status = mypy_api.run(
        ["--strict", "--cache-dir", str(cache), "--no-error-summary", str(source)]
    )
    notes = [line.split("note: ")[1] for line in out.splitlines() if "Revealed type" in line]
    assert notes == [
        'Revealed type is "snippet.City"',
        'Revealed type is "list[int]"',
        'Revealed type is "agui_chat._responses.ChatResponse[Any]"',
    ], out + err
    errors = [line for line in out.splitlines() if "error:" in line]
    assert status == 1 and len(errors) == 1, out
    assert 'Unexpected keyword argument "response_format"' in errors[0], out
    line = next(i for i, text in enumerate(SNIPPET.splitlines(), 1) if "# E:" in text)
    assert f"snippet.py:{line}: error:" in errors[0], out
