"""Every content type there is (every ``type`` registered for loading) survives a JSON
round trip, alone and inside a message: a new content type cannot be added without one."""

from __future__ import annotations

import json

import pytest
from test_contents import EXAMPLES

from agui_chat import AIContent, ChatMessage


def test_every_registered_content_type_has_a_round_trip_example() -> None:
    registered = set(AIContent._registry)
    covered = {content.type for content in EXAMPLES}
    assert registered == covered


@pytest.mark.parametrize("content", EXAMPLES, ids=lambda c: type(c).__name__)
def test_a_message_holding_the_content_round_trips_through_json_text(content: AIContent) -> None:
    message = ChatMessage("assistant", [content], author_name="bot", message_id="m1")
    loaded = ChatMessage.from_dict(json.loads(json.dumps(message.to_dict())))
    assert loaded == message
    assert type(loaded.contents[0]) is type(content)
    assert loaded.contents[0] == content
