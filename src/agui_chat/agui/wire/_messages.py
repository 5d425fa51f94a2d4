"""The AG-UI data our types carry, shared by client and server: the ``additional_properties``
keys that hold it, and the content part of a media source."""

from __future__ import annotations

from typing import Any

# ``additional_properties`` keys: on messages, ChatOptions (set explicitly) and contents.
THREAD_ID_KEY = "agui_thread_id"  # messages (stamped), ChatOptions
RUN_ID_KEY = "agui_run_id"  # messages: the run that produced them
STATE_KEY = "agui_state"  # messages and updates (the state after them), ChatOptions
ENCRYPTED_FOR_KEY = "agui_encrypted_for"  # TextReasoningContent: the message or call it is for
CONTENT_PARTS_KEY = "agui_content_parts"  # FunctionResultContent: the result is content parts
SUBAGENT_KEY = "agui_subagent_run_id"  # messages: the subagentRunId that produced them
#: In a question interrupt's ``metadata``: what an agui_chat server says of the question
#: (``toolCallId``, ``key``) where the spec has no field for it.
QUESTION_METADATA_KEY = "agui_chat"

Wire = dict[str, Any]


def media_part(media_type: str | None, source: Wire, filename: str | None) -> Wire:
    """The AG-UI content part for ``source``: image, audio or video by its media type, else
    document."""
    kind, slash, _ = (media_type or "").lower().partition("/")
    kind = kind if slash and kind in ("image", "audio", "video") else "document"
    part: Wire = {"type": kind, "source": source}
    if filename:
        part["metadata"] = {"filename": filename}
    return part
