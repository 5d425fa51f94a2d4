"""Folding delivered AG-UI events into a thread's ``messages`` and ``state``.

:class:`AGUIStateTracker` keeps only the shared state (cheap enough for every event);
:class:`AGUIThreadReducer` keeps the whole thread as wire-shaped message dicts, so it is
optional and not meant for the hot path. Both expect events that passed the pipeline.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any

import jsonpatch
import jsonpointer

from ._warnings import warn

Event = Mapping[str, Any]
Message = dict[str, Any]

_PATCH_ERRORS = (
    jsonpatch.JsonPatchException,
    jsonpointer.JsonPointerException,
    TypeError,
    ValueError,
    KeyError,
    IndexError,
    AttributeError,
)


_UNSUITED = object()


def _patched_objects(state: Any, patch: Any) -> Any:
    """``patch`` applied to ``state`` when it only adds, replaces or removes members of
    objects along paths of objects (the common delta): the objects on each path are copied,
    the rest is shared, so ``state`` itself never changes. ``_UNSUITED`` for any other patch
    (arrays, ``move``/``copy``/``test``, escapes, a missing member), which ``jsonpatch``
    applies, or refuses, as RFC 6902 says."""
    if type(state) is not dict or type(patch) is not list:
        return _UNSUITED
    root = dict(state)
    copied = {id(root)}  # the objects this patch made: live, so their ids are unique
    for op in patch:
        kind = op.get("op") if type(op) is dict else None
        path = op.get("path") if kind in ("add", "replace", "remove") else None
        if type(path) is not str or path[:1] != "/" or "~" in path:
            return _UNSUITED
        if kind != "remove" and "value" not in op:
            return _UNSUITED
        *parents, last = path[1:].split("/")
        node = root
        for key in parents:
            child = node.get(key)
            if type(child) is not dict:
                return _UNSUITED
            if id(child) not in copied:
                child = node[key] = dict(child)
                copied.add(id(child))
            node = child
        if kind == "add":
            node[last] = op["value"]
        elif last not in node:
            return _UNSUITED
        elif kind == "replace":
            node[last] = op["value"]
        else:
            del node[last]
    return root


class AGUIStateTracker:
    """The AG-UI shared state of one thread: ``STATE_SNAPSHOT`` replaces it (as delivered,
    not copied), ``STATE_DELTA`` patches it atomically into a new value (RFC 6902; a patch
    that does not apply is skipped with a warning). ``state`` is the run input's (``{}``)."""

    __slots__ = ("_state", "_warn")

    def __init__(
        self, state: Any = None, *, on_warning: Callable[[str], None] | None = None
    ) -> None:
        self._state: Any = {} if state is None else state
        self._warn = partial(warn, on_warning)

    @property
    def state(self) -> Any:
        """The current state: any JSON value, including ``None`` after a null snapshot."""
        return self._state

    def apply(self, event: Event) -> bool:
        """Apply a state event; return ``True`` if ``event`` was one (others are ignored)."""
        event_type = event["type"]
        if event_type == "STATE_SNAPSHOT":
            self._state = event["snapshot"]
            return True
        if event_type == "STATE_DELTA":
            patched = _patched_objects(self._state, event["delta"])
            try:
                if patched is _UNSUITED:
                    patched = jsonpatch.apply_patch(self._state, event["delta"], in_place=False)
                self._state = patched
            except _PATCH_ERRORS as exc:
                self._warn(f"Failed to apply state patch ({exc}); keeping the current state")
            return True
        return False


class AGUIThreadReducer:
    """Builds the AG-UI ``messages`` and ``state`` of a thread from delivered events,
    starting from the run input's (both copied); :attr:`messages` can be sent back as the
    next run's input once activity messages are removed."""

    def __init__(
        self,
        messages: Iterable[Mapping[str, Any]] = (),
        state: Any = None,
        *,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        self._warn = partial(warn, on_warning)
        self.state_tracker = AGUIStateTracker(copy.deepcopy(state), on_warning=on_warning)
        self._messages: list[Message] = [copy.deepcopy(dict(m)) for m in messages]
        self._by_id: dict[str, Message] = {}
        self._tool_calls: dict[str, Message] = {}
        # Streamed text is collected as fragments and joined once, not concatenated per delta.
        self._text: dict[str, tuple[Message, list[str]]] = {}
        self._args: dict[str, tuple[Message, list[str]]] = {}
        self._reindex()
        self._handlers: dict[str, Callable[[Event], object]] = {
            **dict.fromkeys(("TEXT_MESSAGE_START", "REASONING_MESSAGE_START"), self._message_start),
            **dict.fromkeys(("TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT"), self._content),
            **dict.fromkeys(
                ("TEXT_MESSAGE_END", "REASONING_MESSAGE_END", "TOOL_CALL_END"), self._end
            ),
            **dict.fromkeys(("STATE_SNAPSHOT", "STATE_DELTA"), self.state_tracker.apply),
            "TOOL_CALL_START": self._tool_call_start,
            "TOOL_CALL_ARGS": self._tool_call_args,
            "TOOL_CALL_RESULT": self._tool_call_result,
            "REASONING_ENCRYPTED_VALUE": self._encrypted_value,
            "ACTIVITY_SNAPSHOT": self._activity_snapshot,
            "ACTIVITY_DELTA": self._activity_delta,
            "MESSAGES_SNAPSHOT": self._messages_snapshot,
        }

    @property
    def messages(self) -> list[Message]:
        """The conversation so far, in order (a new list; the dicts are the reducer's own)."""
        self._flush_all()
        return list(self._messages)

    @property
    def state(self) -> Any:
        """The current state."""
        return self.state_tracker.state

    def apply(self, event: Event) -> None:
        """Fold one delivered event into the thread."""
        handler = self._handlers.get(event["type"])
        if handler is not None:
            handler(event)

    def apply_all(self, events: Iterable[Event]) -> None:
        """Fold several delivered events, in order."""
        for event in events:
            self.apply(event)

    def _reindex(self) -> None:
        self._by_id = {m["id"]: m for m in self._messages if isinstance(m.get("id"), str)}
        self._tool_calls = {
            call["id"]: call
            for m in self._messages
            for call in (m.get("toolCalls") or ())
            if isinstance(call, dict) and isinstance(call.get("id"), str)
        }

    def _add(self, message: Message) -> Message:
        self._messages.append(message)
        self._by_id[message["id"]] = message
        return message

    @staticmethod
    def _merge_metadata(target: Message, event: Event) -> None:
        # Per key, last write wins, no recursion; a new dict so the event's is never mutated.
        metadata = event.get("metadata")
        if metadata:
            current = target.get("metadata")
            target["metadata"] = {**current, **metadata} if current else dict(metadata)

    def _flush(self, buffers: dict[str, tuple[Message, list[str]]], key: str) -> None:
        entry = buffers.pop(key, None)
        if entry is None:
            return
        target, parts = entry
        text = "".join(parts)
        field = "arguments" if buffers is self._args else "content"
        base = target.get(field)
        if isinstance(base, list):  # a reopened message whose content is a list of parts
            target[field] = [*base, {"type": "text", "text": text}]
        else:
            target[field] = (base or "") + text

    def _flush_all(self) -> None:
        for buffers in (self._text, self._args):
            for key in list(buffers):
                self._flush(buffers, key)

    def _message_start(self, event: Event) -> None:
        message_id: str = event["messageId"]
        message = self._by_id.get(message_id)
        if message is None:
            message = {"id": message_id, "role": _role_of(event), "content": ""}
            if "name" in event:
                message["name"] = event["name"]
            self._add(_owned(message, event))
        self._merge_metadata(message, event)

    def _content(self, event: Event) -> None:
        message_id: str = event["messageId"]
        entry = self._text.get(message_id)
        if entry is None:
            message = self._by_id.get(message_id)
            if message is None:  # a snapshot dropped it while it was open: restore it
                message = self._add({"id": message_id, "role": _role_of(event), "content": ""})
            entry = self._text[message_id] = (message, [])
        entry[1].append(event["delta"])
        self._merge_metadata(entry[0], event)

    def _end(self, event: Event) -> None:
        call = event["type"] == "TOOL_CALL_END"
        key = event["toolCallId"] if call else event["messageId"]
        self._flush(self._args if call else self._text, key)
        target = (self._tool_calls if call else self._by_id).get(key)
        if target is not None:
            self._merge_metadata(target, event)

    def _tool_call_start(self, event: Event) -> None:
        call_id: str = event["toolCallId"]
        call = self._tool_calls.get(call_id)
        if call is None:
            call = {
                "id": call_id,
                "type": "function",
                "function": {"name": event["toolCallName"], "arguments": ""},
            }
            parent_id = event.get("parentMessageId")
            parent = self._by_id.get(parent_id) if parent_id is not None else None
            if parent is None or parent.get("role") != "assistant":
                if parent is not None:
                    self._warn(
                        f"tool call '{call_id}' names parent message '{parent_id}', which is a "
                        f"{parent.get('role')} message; holding it in a new assistant message"
                    )
                parent_id = parent_id if parent is None and parent_id else call_id
                parent = self._add(_owned({"id": parent_id, "role": "assistant"}, event))
            parent.setdefault("toolCalls", []).append(call)
            self._tool_calls[call_id] = call
        self._merge_metadata(call, event)

    def _tool_call_args(self, event: Event) -> None:
        call_id: str = event["toolCallId"]
        entry = self._args.get(call_id)
        if entry is None:
            call = self._tool_calls.get(call_id)
            if call is None:
                return
            entry = self._args[call_id] = (call["function"], [])
        entry[1].append(event["delta"])
        if "metadata" in event:
            self._merge_metadata(self._tool_calls[call_id], event)

    def _tool_call_result(self, event: Event) -> None:
        message: Message = {
            "id": event["messageId"],
            "role": "tool",
            "toolCallId": event["toolCallId"],
            "content": event["content"],
        }
        _owned(message, event)
        self._merge_metadata(message, event)
        existing = self._by_id.get(message["id"])
        if existing is None:
            self._add(message)
        else:  # the newest mint wins, in place
            existing.clear()
            existing.update(message)

    def _encrypted_value(self, event: Event) -> None:
        entity_id: str = event["entityId"]
        if event["subtype"] == "tool-call":
            self._flush(self._args, entity_id)
            target = self._tool_calls.get(entity_id)
        else:
            target = self._by_id.get(entity_id)
            if target is not None and target.get("role") == "activity":
                target = None  # activity messages cannot hold an encrypted value
        if target is None:
            self._warn(
                f"REASONING_ENCRYPTED_VALUE names {event['subtype']} '{entity_id}', which this "
                "thread does not hold; the value is dropped"
            )
            return
        target["encryptedValue"] = event["encryptedValue"]
        if "encryptedValueType" in event:
            target["encryptedValueType"] = event["encryptedValueType"]
        else:
            target.pop("encryptedValueType", None)

    def _activity_snapshot(self, event: Event) -> None:
        message_id: str = event["messageId"]
        message = self._by_id.get(message_id)
        if message is None:
            message = self._add({"id": message_id, "role": "activity"})
        elif message.get("role") != "activity":
            self._warn(
                f"ACTIVITY_SNAPSHOT names message '{message_id}', which is a "
                f"{message.get('role')} message, not an activity; skipped"
            )
            return
        if "content" not in message or event.get("replace", True):
            message["activityType"] = event["activityType"]
            message["content"] = event["content"]
            _owned(message, event)  # a replacing snapshot re-mints the activity
        self._merge_metadata(message, event)

    def _activity_delta(self, event: Event) -> None:
        message_id: str = event["messageId"]
        message = self._by_id.get(message_id)
        if message is None or message.get("role") != "activity":
            self._warn(
                f"ACTIVITY_DELTA names message '{message_id}', which is not an activity this "
                "thread holds; skipped"
            )
            return
        try:
            message["content"] = jsonpatch.apply_patch(
                message["content"], event["patch"], in_place=False
            )
        except _PATCH_ERRORS as exc:
            self._warn(
                f"Failed to apply activity patch to '{message_id}' ({exc}); keeping its content"
            )
            return
        message["activityType"] = event["activityType"]
        self._merge_metadata(message, event)

    def _messages_snapshot(self, event: Event) -> None:
        self._flush_all()
        incoming: list[Message] = copy.deepcopy(event["messages"])
        by_id = {m["id"]: m for m in incoming}
        roles = {m["role"] for m in incoming}
        # Client-only material the producer does not track survives, unless the snapshot
        # itself carries messages of that role (then it declares the complete set).
        kept_roles = {"activity", "reasoning"} - roles
        reconciled: list[Message] = []
        for held in self._messages:
            held_id = held.get("id")
            replacement = by_id.pop(held_id, None) if isinstance(held_id, str) else None
            if replacement is not None:
                reconciled.append(replacement)
            elif held.get("role") in kept_roles:
                reconciled.append(held)
        reconciled.extend(m for m in incoming if m["id"] in by_id)
        self._messages = reconciled
        self._reindex()


def _role_of(event: Event) -> str:
    """The role of the message a start or content event opens (a start may name it)."""
    return "reasoning" if event["type"].startswith("REASONING") else event.get("role", "assistant")


def _owned(message: Message, event: Event) -> Message:
    """``message`` with the ``subagentRunId`` of the event that mints it (or none)."""
    if "subagentRunId" in event:
        message["subagentRunId"] = event["subagentRunId"]
    else:
        message.pop("subagentRunId", None)
    return message
