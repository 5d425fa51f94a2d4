"""Terminal prompts for a paused run: approvals and questions built from a JSON schema."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from .._contents import (
    AIContent,
)
from .._exceptions import HumanInTheLoopError
from .._hitl_contents import (
    InputRequestContent,
    InterruptRequestContent,
    ToolApprovalRequestContent,
)
from .._schema import schema_errors

__all__ = ["Terminal", "answer_requests"]


class Terminal:
    """Where the prompts read and write. With ``auto`` every prompt answers itself (approve,
    take the schema's defaults) and says so, which is what ``--yes`` and a non-interactive
    stdin get."""

    def __init__(
        self, *, auto: bool, stdin: TextIO | None = None, stdout: TextIO | None = None
    ) -> None:
        self.auto = auto
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout

    def say(self, text: str = "", *, end: str = "\n") -> None:
        self.stdout.write(text + end)
        self.stdout.flush()

    def ask(self, prompt: str, auto_answer: str) -> str:
        """Read one line (EOF reads as the automatic answer)."""
        if self.auto:
            self.say(f"{prompt}{auto_answer}  [auto]")
            return auto_answer
        self.say(prompt, end="")
        line = self.stdin.readline()
        if not line:
            self.say(f"{auto_answer}  [end of input]")
            return auto_answer
        return line.strip()


def answer_requests(requests: list[InputRequestContent], term: Terminal) -> list[AIContent]:
    """Ask the person about every request of a pause and return their answers."""
    answers: list[AIContent] = []
    for request in requests:
        if isinstance(request, ToolApprovalRequestContent):
            answers.append(_ask_approval(request, term))
        elif isinstance(request, InterruptRequestContent):
            answers.append(_ask_question(request, term))
    return answers


def _ask_approval(request: ToolApprovalRequestContent, term: Terminal) -> AIContent:
    call = request.tool_call
    args = json.dumps(call.arguments or {}, ensure_ascii=False)
    term.say(f"  approval needed: {call.name}({args})")
    if request.message:
        term.say(f"  {request.message}")
    options = "[a]pprove / [r]eject" + (" / [e]dit" if request.allow_edits else "")
    while True:
        choice = term.ask(f"  {options}? ", "a").lower()
        if choice in ("a", "approve", "y", "yes"):
            return request.create_response(True)
        if choice in ("r", "reject", "n", "no"):
            reason = term.ask("  reason (optional): ", "")
            return request.create_response(False, reason or None)
        if choice in ("e", "edit") and request.allow_edits:
            text = term.ask("  new arguments as JSON: ", args)
            try:
                edited = json.loads(text)
                if not isinstance(edited, dict):
                    raise ValueError("arguments must be a JSON object")
                return request.create_response(True, edited_arguments=edited)
            except (ValueError, HumanInTheLoopError) as exc:
                term.say(f"  not accepted: {exc}")
                continue
        term.say("  please answer a, r" + (" or e" if request.allow_edits else ""))


def _ask_question(request: InterruptRequestContent, term: Terminal) -> AIContent:
    term.say(f"  question: {request.message or request.reason or request.request_id}")
    schema = request.response_schema
    while True:
        if (
            schema
            and schema.get("type") == "object"
            and isinstance(schema.get("properties"), Mapping)
        ):
            payload: Any = _ask_form(schema, term)
        else:
            text = term.ask("  answer (JSON, or 'cancel'): ", json.dumps(_auto_value(schema or {})))
            if text.lower() == "cancel":
                payload = None
            else:
                try:
                    payload = json.loads(text)
                except ValueError:
                    payload = text
        if payload is None:
            return request.cancel()
        try:
            return request.create_response(payload)
        except HumanInTheLoopError as exc:
            term.say(f"  not accepted: {exc}")
            if term.auto:
                return request.cancel()


def _ask_form(schema: Mapping[str, Any], term: Terminal) -> dict[str, Any] | None:
    """One prompt per property; an empty answer skips an optional field, 'cancel' declines."""
    required = set(schema.get("required", ()))
    payload: dict[str, Any] = {}
    for name, prop in schema["properties"].items():
        prop = prop if isinstance(prop, Mapping) else {}
        label = prop.get("description") or name
        kind = prop.get("type", "string")
        hint = f" ({'/'.join(map(str, prop['enum']))})" if "enum" in prop else f" ({kind})"
        default = prop.get("default")
        auto = "" if default is None and name not in required else json.dumps(_auto_value(prop))
        while True:
            mark = "*" if name in required else ""
            text = term.ask(f"  {label}{mark}{hint}: ", auto.strip('"'))
            if text.lower() == "cancel":
                return None
            if not text:
                if name in required and default is None:
                    term.say("  this field is required (or type 'cancel')")
                    continue
                if default is not None:
                    payload[name] = default
                break
            try:
                value = _coerce(text, kind)
            except ValueError as exc:
                term.say(f"  {exc}")
                continue
            problems = schema_errors(value, prop)
            if problems:
                term.say("  " + "; ".join(p.split(": ", 1)[-1] for p in problems))
                continue
            payload[name] = value
            break
    return payload


def _coerce(text: str, kind: Any) -> Any:
    converters: dict[str, Callable[[str], Any]] = {
        "integer": int,
        "number": float,
        "boolean": lambda t: {
            "true": True,
            "yes": True,
            "y": True,
            "false": False,
            "no": False,
            "n": False,
        }[t.lower()],
        "string": str,
    }
    convert = converters.get(kind if isinstance(kind, str) else "string")
    if convert is None:
        return json.loads(text)
    try:
        return convert(text)
    except (KeyError, ValueError):
        raise ValueError(f"expected {kind}, got {text!r}") from None


def _auto_value(prop: Mapping[str, Any]) -> Any:
    """The answer ``--yes`` gives: the default, else the first enum value, else a plain value."""
    if "default" in prop:
        return prop["default"]
    if prop.get("enum"):
        return prop["enum"][0]
    kind = prop.get("type")
    if kind == "integer":
        return int(prop.get("minimum", 1))
    if kind == "number":
        return float(prop.get("minimum", 1))
    if kind == "boolean":
        return True
    if kind == "object":
        return {
            k: _auto_value(v)
            for k, v in prop.get("properties", {}).items()
            if k in prop.get("required", ())
        }
    return "yes"
