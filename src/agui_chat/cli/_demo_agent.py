"""The demo agent: a deterministic offline model and two tools that need a person.

``delete_file`` needs approval; ``deploy`` asks which build to ship. The model is a
``ScriptedChatClient``, so the demo runs with no network and no key.
"""

from __future__ import annotations

import uuid

from .._contents import AIContent, FunctionCallContent, FunctionResultContent, TextContent
from .._input import request_input
from .._messages import ChatMessage
from .._options import ChatOptions
from .._role_and_finish_reason import ChatRole
from .._tools import AIFunction, ai_function, approval_required
from ..testing import ScriptedChatClient

__all__ = ["DEMO_PROMPTS", "demo_model", "demo_tools"]

#: What the demo "user" says, turn by turn.
DEMO_PROMPTS = (
    "Please clean up the draft report.",
    "Now deploy the web service.",
)

BUILD_SCHEMA = {
    "type": "object",
    "properties": {
        "build": {
            "type": "integer",
            "minimum": 1,
            "default": 42,
            "description": "Build number to deploy",
        },
        "note": {"type": "string", "description": "A note for the release log"},
    },
    "required": ["build"],
}


def demo_tools() -> list[AIFunction]:
    """Fresh demo tools (they record nothing globally, so each server gets its own)."""

    @approval_required
    @ai_function
    def delete_file(path: str) -> str:
        """Delete a file from the workspace.

        Args:
            path: The file to delete.
        """
        return f"deleted {path}"

    @ai_function
    def deploy(service: str) -> str:
        """Deploy a service; asks the person which build to ship.

        Args:
            service: The service to deploy.
        """
        answer = request_input(
            f"Which build of {service} should I deploy?", response_schema=BUILD_SCHEMA
        )
        if answer.cancelled:
            return f"deployment of {service} cancelled by the user"
        note = answer.payload.get("note")
        suffix = f" ({note})" if note else ""
        return f"deployed {service} build {answer.payload['build']}{suffix}"

    return [delete_file, deploy]


def _reply(messages: list[ChatMessage], options: ChatOptions | None) -> list[AIContent] | str:
    last = messages[-1] if messages else None
    if last is None:
        return "Hello!"
    if last.role == ChatRole.TOOL:
        results = [c for c in last.contents if isinstance(c, FunctionResultContent)]
        said = "; ".join(str(r.result) for r in results)
        if "rejected" in said:
            return f"Understood, I did not do it. ({said})"
        return f"Done: {said}."
    text = last.text.lower()
    call_id = f"call_{uuid.uuid4().hex[:8]}"
    if "clean" in text or "delete" in text:
        return [
            TextContent("I will delete the draft report. "),
            FunctionCallContent(call_id, "delete_file", {"path": "reports/q3-draft.txt"}),
        ]
    if "deploy" in text:
        return [
            TextContent("Starting the deployment. "),
            FunctionCallContent(call_id, "deploy", {"service": "web"}),
        ]
    return (
        "I am the offline demo model. Ask me to clean up a report or to deploy a service; "
        "both need your say-so."
    )


def demo_model() -> ScriptedChatClient:
    """The deterministic demo model."""
    return ScriptedChatClient(_reply, model_id="agui-chat-demo")
