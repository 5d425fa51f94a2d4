"""Terminal prompts for a paused run: approvals and questions built from a JSON schema.

Consent fails closed: an approval prompt that gets no answer (end of input, an unreadable
stream, Ctrl-C) rejects the call with the reason :data:`NO_ANSWER` and says so; a question
without an answer is cancelled. Only ``auto`` (``--yes``) answers by itself.

Everything shown that came from a model or a server (tool names, arguments, messages,
questions, schema labels, errors) goes through the consent engine's display function
(:mod:`agui_chat._display`): escapes stay visible, one value never spans lines, and a call too
long to show whole says so and offers ``[v]iew all``.

An approval is one line, ``approve NAME(ARGS)? [y]es / [n]o`` (`` / [e]dit`` when edits are
offered, `` / [d]on't ask again`` when the approval may be remembered, `` / [v]iew all`` when
the call is cut), then ``reason (optional):`` on a rejection; the samples ask the same way.
``d`` is offered only where the request allows remembering (``allow_remember``: the server's
interrupt offers it), after a line that says exactly what it covers: this call with these
same arguments, in this conversation, for :data:`REMEMBER_FOR` (less if the server allows
less). Any other answer approves nothing and asks again. An edit starts from the proposed
arguments, as JSON on the line to change; it is shown as the new call, with what changed, and
is sent only once the person confirms it; declining goes back to the proposed call.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any, TextIO

from .._contents import AIContent
from .._display import Shown, shown_call, shown_changes, shown_text, visible
from .._exceptions import HumanInTheLoopError
from .._hitl_contents import (
    InputRequestContent,
    InterruptRequestContent,
    ToolApprovalRequestContent,
)
from .._schema import schema_errors
from ._input import CtrlC, Interrupted, LineReader

__all__ = [
    "NO_ANSWER",
    "REMEMBER_FOR",
    "Terminal",
    "answer_requests",
    "approval_prompt",
    "changes",
    "one_line",
    "remember_covers",
    "remember_offer",
]

#: The reason a call is rejected with when the person gave no answer; the model reads it
#: after MEAI's text, as given ("Tool call invocation rejected. no answer from the person").
NO_ANSWER = "no answer from the person"


#: How long "don't ask again" lasts (unless the server allows less).
REMEMBER_FOR = timedelta(minutes=10)

#: Where ``AGUIChatClient`` keeps the interrupt a request came from (``agui.client._updates``).
_INTERRUPT_KEY = "agui_interrupt"


def approval_prompt(call: Shown, *, allow_edits: bool, remember: bool = False) -> str:
    """The one approval question, shared by the CLI and the samples: ``call`` is
    :func:`~agui_chat._display.shown_call` of the call that runs; ``remember``: "don't ask
    again" is offered (:func:`remember_offer`)."""
    edit = " / [e]dit" if allow_edits else ""
    keep = " / [d]on't ask again" if remember else ""
    view = " / [v]iew all" if call.cut else ""
    return f"approve {call.text}? [y]es / [n]o{edit}{keep}{view}: "


def remember_offer(request: ToolApprovalRequestContent) -> timedelta | None:
    """How long "don't ask again" would last for ``request``: :data:`REMEMBER_FOR`, or the
    most the server's interrupt allows if that is less (whole seconds); ``None`` when it is not
    offered: the request does not allow remembering, or allows less than a second."""
    if not request.allow_remember:
        return None
    cap = _remember_cap(request)
    if cap is None:
        return REMEMBER_FOR
    seconds = math.floor(cap)
    return None if seconds < 1 else min(REMEMBER_FOR, timedelta(seconds=seconds))


def _remember_cap(request: ToolApprovalRequestContent) -> float | None:
    """The ``remember.seconds`` maximum of the interrupt's response schema, if it names a
    usable one (a positive finite number)."""
    found: Any = (request.additional_properties or {}).get(_INTERRUPT_KEY)
    for key in ("responseSchema", "properties", "remember", "properties", "seconds", "maximum"):
        found = found.get(key) if isinstance(found, Mapping) else None
    if isinstance(found, bool) or not isinstance(found, (int, float)):
        return None
    return float(found) if math.isfinite(found) and found > 0 else None


def _duration(length: timedelta) -> str:
    seconds = int(length.total_seconds())
    if seconds % 60 == 0:
        minutes = seconds // 60
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"


def remember_covers(call: Shown, length: timedelta) -> str:
    """What "don't ask again" covers, said before the prompt that offers it."""
    return (
        f"d = approve and don't ask again in this conversation for {_duration(length)}: "
        f"only {call.text} with these same arguments, only in this conversation, only for the "
        f"next {_duration(length)}"
    )


def one_line(text: object) -> str:
    """Text from a model or a server as one visibly escaped line, whole."""
    return shown_text(str(text), multiline=False).full


class Terminal:
    """Where the prompts read and write. With ``auto`` every prompt answers itself (approve,
    take the schema's defaults) and says so: that is ``--yes``, and nothing else."""

    def __init__(self, *, auto: bool) -> None:
        self.auto = auto
        self.reader = LineReader(sys.stdin)
        self.stdout: TextIO = sys.stdout
        self.ctrl_c = CtrlC()

    def say(self, text: str = "", *, end: str = "\n") -> None:
        """Write ``text``: whatever a caller forgot to escape is escaped here (newlines and
        tabs aside), so no control sequence ever reaches the terminal."""
        self.stdout.write(visible(text + end, multiline=True))
        self.stdout.flush()

    async def read(self, prompt: str, *, strip: bool = True) -> str | None:
        """One line typed after ``prompt`` (without the spaces around it unless ``strip``
        is false); ``None`` at the end of input or when the input cannot be read;
        :class:`Interrupted` on Ctrl-C."""
        self.say(prompt, end="")
        try:
            line = await self.ctrl_c.run(self.reader.readline())
        except OSError:
            return None
        if line is None:
            return None
        return line.strip() if strip else line

    async def edit(self, prompt: str, text: str) -> str | None:
        """Like :meth:`read`, with the line starting as ``text`` for the person to change (at
        a terminal with GNU readline; elsewhere ``text`` is shown on the line above)."""
        if not self.reader.can_prefill():
            indent = prompt[: len(prompt) - len(prompt.lstrip())]
            self.say(f"{indent}now: {text}")
            return await self.read(prompt)
        self.stdout.flush()
        try:
            line = await self.ctrl_c.run(self.reader.edit(prompt, text))
        except OSError:
            return None
        return None if line is None else line.strip()

    async def ask(self, prompt: str, auto_answer: str, *, strip: bool = True) -> str | None:
        """Like :meth:`read`, but with ``auto`` the automatic answer is given (and shown)."""
        if self.auto:
            self.say(f"{prompt}{auto_answer}  [auto]")
            return auto_answer
        return await self.read(prompt, strip=strip)


async def answer_requests(
    requests: list[InputRequestContent], term: Terminal
) -> tuple[list[AIContent], bool]:
    """Ask the person about every request of a pause: (their answers, whether every
    request got one). Ctrl-C declines the rest of the pause (approvals rejected, questions
    cancelled), said aloud."""
    answers: list[AIContent] = []
    answered = True
    try:
        for request in requests:
            if isinstance(request, ToolApprovalRequestContent):
                answer, given = await _ask_approval(request, term)
            elif isinstance(request, InterruptRequestContent):
                answer, given = await _ask_question(request, term)
            else:
                continue
            answers.append(answer)
            answered = answered and given
    except Interrupted:
        term.say()  # the terminal itself echoed the ^C
        answers = [_decline(r, term) for r in requests if _askable(r)]
        answered = False
    return answers, answered


def _askable(request: InputRequestContent) -> bool:
    return isinstance(request, (ToolApprovalRequestContent, InterruptRequestContent))


def _decline(request: InputRequestContent, term: Terminal) -> AIContent:
    if isinstance(request, ToolApprovalRequestContent):
        term.say(f"  rejected {one_line(request.tool_call.name)}: {NO_ANSWER}")
        return request.create_response(False, NO_ANSWER)
    assert isinstance(request, InterruptRequestContent)
    term.say(f"  question cancelled: {NO_ANSWER}")
    return request.cancel()


def _no_answer(request: ToolApprovalRequestContent, term: Terminal) -> tuple[AIContent, bool]:
    term.say(f"\n  end of input: rejected {one_line(request.tool_call.name)} ({NO_ANSWER})")
    return request.create_response(False, NO_ANSWER), False


async def _ask_approval(
    request: ToolApprovalRequestContent, term: Terminal
) -> tuple[AIContent, bool]:
    call = request.tool_call
    shown = shown_call(call.name, call.arguments)
    if request.message and request.message != f"Approve {call.name}?":  # not the default
        term.say(f"  {one_line(request.message)}")
    remember = remember_offer(request)
    if remember is not None and not term.auto:
        term.say(f"  {remember_covers(shown, remember)}")
    prompt = "  " + approval_prompt(
        shown, allow_edits=request.allow_edits, remember=remember is not None
    )
    while True:
        choice = await term.ask(prompt, "y")
        if choice is None:
            return _no_answer(request, term)
        choice = choice.lower()
        if choice in ("y", "yes", "a", "approve"):
            return request.create_response(True), True
        if choice == "d" and remember is not None:
            answer = request.create_response(True, remember="thread", remember_for=remember)
            return answer, True
        if choice in ("n", "no", "r", "reject"):
            reason = await term.ask("  reason (optional): ", "", strip=False)
            if reason is None:
                term.say()
            # The person's own words, passed on verbatim (a blank one means none).
            return request.create_response(False, reason or None), True
        if choice in ("v", "view") and shown.cut:
            term.say(f"  {shown.full}")
            continue
        if choice in ("e", "edit") and request.allow_edits:
            edited = await _edit(request, term)
            if edited is not None:
                return edited
            continue
        term.say(
            "  please answer y or n"
            + (" (or e to edit)" if request.allow_edits else "")
            + (" (or d not to be asked again)" if remember is not None else "")
            + (" (or v to view the whole call)" if shown.cut else "")
        )


async def _edit(
    request: ToolApprovalRequestContent, term: Terminal
) -> tuple[AIContent, bool] | None:
    """Read new arguments, show the edited call and what changed, and send it only once
    confirmed; ``None`` goes back to the proposed call (nothing decided yet)."""
    call = request.tool_call
    proposed = dict(call.arguments or {})
    text = await term.edit("  new arguments as JSON: ", _as_typed(proposed))
    if text is None:
        return _no_answer(request, term)
    try:
        edited = json.loads(text)
        if not isinstance(edited, dict):
            raise ValueError("arguments must be a JSON object")
        response = request.create_response(True, edited_arguments=edited)
    except (ValueError, HumanInTheLoopError) as exc:
        term.say(f"  not accepted: {one_line(exc)}")
        return None
    changed = changes(proposed, edited)
    if not changed:
        term.say("  unchanged: that is the proposed call")
        return None
    for line in changed:
        term.say(f"  {line}")
    shown = shown_call(call.name, edited)
    view = " / [v]iew all" if shown.cut else ""
    prompt = f"  run the edited call {shown.text} instead? [y]es / [n]o, back{view}: "
    while True:
        choice = await term.read(prompt)
        if choice is None:
            return _no_answer(request, term)
        choice = choice.lower()
        if choice in ("y", "yes"):
            return response, True
        if choice in ("n", "no"):
            term.say("  edit dropped; the proposed call is still waiting for your answer")
            return None
        if choice in ("v", "view") and shown.cut:
            term.say(f"  {shown.full}")
            continue
        term.say("  please answer y (run the edited call) or n (back to the proposed one)")


def _as_typed(arguments: Mapping[str, Any]) -> str:
    """``arguments`` as the JSON the person starts an edit from: ASCII only, every other
    character (controls, invisible and bidirectional ones) as its ``\\u`` escape, so what
    the line shows is what it holds."""
    return json.dumps(arguments, ensure_ascii=True).replace("\x7f", "\\u007f")


def changes(proposed: Mapping[str, Any], edited: Mapping[str, Any]) -> list[str]:
    """What an edit changed, one argument a line (each value as the JSON the tool gets; two
    that would look alike show where they differ escaped)."""
    return [
        f"added    {after}"
        if before is None
        else f"removed  {before}"
        if after is None
        else f"changed  {before}  →  {after}"
        for before, after in shown_changes(proposed, edited)
    ]


async def _ask_question(request: InterruptRequestContent, term: Terminal) -> tuple[AIContent, bool]:
    term.say(f"  question: {one_line(request.message or request.reason or request.request_id)}")
    schema = request.response_schema
    while True:
        if (
            schema
            and schema.get("type") == "object"
            and isinstance(schema.get("properties"), Mapping)
        ):
            payload: Any = await _ask_form(schema, term)
        else:
            text = await term.ask(
                "  answer (JSON, or 'cancel'): ", json.dumps(_auto_value(schema or {}))
            )
            if text is None:
                payload = _NO_ANSWER
            elif text.lower() == "cancel":
                payload = None
            else:
                try:
                    payload = json.loads(text)
                except ValueError:
                    payload = text
        if payload is _NO_ANSWER:
            term.say(f"\n  end of input: question cancelled ({NO_ANSWER})")
            return request.cancel(), False
        if payload is None:
            return request.cancel(), True
        try:
            return request.create_response(payload), True
        except HumanInTheLoopError as exc:
            term.say(f"  not accepted: {one_line(exc)}")
            if term.auto:
                return request.cancel(), True


#: A form left without an answer (end of input), as opposed to ``None`` (cancelled).
_NO_ANSWER: Any = object()


def field_prompt(name: str, prop: Mapping[str, Any], required: bool) -> str:
    """``  Build number (integer, required) [42]: ``: the label, the type or choices,
    whether it must be answered, and the default an empty answer takes."""
    label = one_line(prop.get("description") or prop.get("title") or name)
    kind = (
        "/".join(_show(choice) for choice in prop["enum"])
        if isinstance(prop.get("enum"), list)
        else one_line(prop.get("type", "string"))
    )
    default = f" [{_show(prop['default'])}]" if "default" in prop else ""
    return f"  {label} ({kind}, {'required' if required else 'optional'}){default}: "


def _show(value: Any) -> str:
    """A schema value (a default, a choice) as one escaped line: a string as it is typed."""
    return one_line(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


async def _ask_form(schema: Mapping[str, Any], term: Terminal) -> Any:
    """One prompt per property; an empty answer takes the default or skips an optional
    field, 'cancel' declines (``None``), end of input leaves it unanswered."""
    required = set(schema.get("required", ()))
    payload: dict[str, Any] = {}
    for name, prop in schema["properties"].items():
        prop = prop if isinstance(prop, Mapping) else {}
        kind = prop.get("type", "string")
        must = name in required
        auto = _show(_auto_value(prop)) if must or "default" in prop else ""
        while True:
            text = await term.ask(field_prompt(name, prop, must), auto)
            if text is None:
                return _NO_ANSWER
            if text.lower() == "cancel":
                return None
            if not text:
                if "default" in prop:
                    payload[name] = prop["default"]
                elif must:
                    term.say("  this field is required (or type 'cancel')")
                    continue
                break
            try:
                value = _coerce(text, kind)
            except ValueError as exc:
                term.say(f"  {one_line(exc)}")
                continue
            problems = schema_errors(value, prop)
            if problems:
                term.say("  " + one_line("; ".join(p.split(": ", 1)[-1] for p in problems)))
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
