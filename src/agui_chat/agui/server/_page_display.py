"""What the server's own page shows of tool calls and texts: the consent engine's display
(``_display.py``, DESIGN §3 rule 8), asked for with ``POST <endpoint>?agui_chat=display``
so the page never renders a call, an edit or a result with a text of its own.

The page sends ``{"calls": [{"name", "arguments", "before"?}], "texts": [...]}``, each
``arguments`` (and ``before``) the JSON text as the page holds it, so a large integer is read
here exactly as it runs; the answer is ``{"calls": [{"call", "tool", "changes"?}],
"texts": [...]}``, each shown value ``{"text", "full", "omitted"}``, each change
``{"before", "after"}`` (the shown ``key=value``, ``null`` for a key that is not there; two
that would look alike show where they differ escaped).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from ..._display import Shown, shown_call, shown_changes, shown_text
from ._body import parse_json, read_body
from ._from_wire import InputError

#: The query string of a display request (the page's only other POST).
DISPLAY_QUERY = b"agui_chat=display"
#: At most this many calls and texts in one request.
MAX_ITEMS = 200


async def display_response(request: Request, *, max_bytes: int, timeout: float) -> JSONResponse:
    """The display of every call and text the page asks about; 400 for a malformed ask."""
    if request.method != "POST":
        raise InputError(405, "METHOD_NOT_ALLOWED", "send a POST with the calls to display")
    data = parse_json(await read_body(request, max_bytes=max_bytes, timeout=timeout))
    calls = data.get("calls", []) if isinstance(data, dict) else None
    texts = data.get("texts", []) if isinstance(data, dict) else None
    if not isinstance(calls, list) or not isinstance(texts, list):
        raise InputError(400, "INVALID_DISPLAY_REQUEST", "send {calls: [...], texts: [...]}")
    if len(calls) + len(texts) > MAX_ITEMS:
        raise InputError(400, "INVALID_DISPLAY_REQUEST", f"at most {MAX_ITEMS} items at once")
    if not all(isinstance(t, str) for t in texts):
        raise InputError(400, "INVALID_DISPLAY_REQUEST", "every text must be a string")
    return JSONResponse(
        {"calls": [_call(c) for c in calls], "texts": [shown_json(shown_text(t)) for t in texts]}
    )


def _call(ask: Any) -> dict[str, Any]:
    if not isinstance(ask, dict) or not isinstance(ask.get("name"), str):
        raise InputError(400, "INVALID_DISPLAY_REQUEST", "every call needs a name")
    name = shown_text(ask["name"], multiline=False)
    after = _arguments(ask.get("arguments"))
    if after is None:  # not an object: shown as the text it is, escaped
        raw = ask.get("arguments")
        text = raw if isinstance(raw, str) else json.dumps(raw)
        call = shown_text(f"{name.full}({text})", multiline=False)
    else:
        call = shown_call(ask["name"], after)
    out: dict[str, Any] = {"call": shown_json(call), "tool": shown_json(name)}
    if after is not None and "before" in ask:
        before = _arguments(ask["before"]) or {}
        out["changes"] = [
            {"before": _one(old), "after": _one(new)} for old, new in shown_changes(before, after)
        ]
    return out


def _arguments(text: Any) -> dict[str, Any] | None:
    """The arguments of a JSON text (as the server reads them: integers exact), or ``None``."""
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text or "{}")
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _one(shown: str | None) -> dict[str, Any] | None:
    return None if shown is None else shown_json(shown_text(shown, multiline=False))


def shown_json(shown: Shown) -> dict[str, Any]:
    """A display as the page reads it."""
    return {"text": shown.text, "full": shown.full, "omitted": shown.omitted}
