"""Tools: declarations the model sees (``AIFunctionDeclaration``), Python functions we can run
(``AIFunction``, ``ai_function``) and the approval marker (``ApprovalRequiredAIFunction``,
``approval_required``)."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, overload

from ._exceptions import ToolArgumentsError, ToolError
from ._principal import Principal

if TYPE_CHECKING:  # pydantic is imported when the first tool is built (import time)
    from pydantic import BaseModel

    from ._contents import FunctionCallContent

_T = TypeVar("_T")
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
ApprovalPredicate = Callable[[Mapping[str, Any]], bool]
#: Who may answer a gated call: a role name, role names (one is needed) or
#: ``predicate(principal, call) -> bool``.
ApproverRule: TypeAlias = "str | Iterable[str] | Callable[[Principal, FunctionCallContent], bool]"


def arguments_object(tool_name: str, arguments: Any) -> dict[str, Any]:
    """A tool call's arguments as a fresh dict (none: ``{}``); ``ToolArgumentsError`` unless
    they are a JSON object (a mapping)."""
    if arguments is None:
        return {}
    if not isinstance(arguments, Mapping):
        raise ToolArgumentsError(
            f"arguments for {tool_name!r} must be a JSON object, got {type(arguments).__name__}"
        )
    return dict(arguments)


class AITool:
    """Base of every tool."""

    name: str
    description: str
    additional_properties: dict[str, Any]

    def get_service(self, kind: type[_T]) -> _T | None:
        """This tool if it is a ``kind``, else ``None`` (wrappers also ask what they wrap)."""
        return self if isinstance(self, kind) else None

    def current(self) -> AITool | None:
        """The tool as its source offers it now: itself, unless a source that can change
        its tools made it (an MCP server's listing, which ``tools/list_changed`` replaces);
        then the source's current version of it, or ``None`` if the source withdrew it.
        Wrappers answer for what they wrap. The consent engine reads a call's gate from
        the wrappers and from this, so a copied tool list is gated like its source."""
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class AIFunctionDeclaration(AITool):
    """A tool the model can call, described by ``parameters`` (the JSON schema of its
    arguments); the caller runs it (the tool loop hands its calls back). ``ToolError`` for
    an invalid name."""

    def __init__(
        self,
        name: str,
        description: str = "",
        parameters: Mapping[str, Any] | None = None,
        *,
        additional_properties: Mapping[str, Any] | None = None,
    ) -> None:
        if not _NAME.match(name):
            raise ToolError(
                f"tool name {name!r} is invalid: use 1-64 letters, digits, '_' or '-' "
                "(pass name=... to ai_function)"
            )
        self.name = name
        self.description = description
        self.parameters: dict[str, Any] = (
            dict(parameters) if parameters is not None else {"type": "object", "properties": {}}
        )
        self.additional_properties = dict(additional_properties or {})

    def to_dict(self) -> dict[str, Any]:
        """``{name, description, parameters}``, as function-calling APIs expect it."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


def function_declarations(tools: Iterable[AITool] | None, api: str) -> list[AIFunctionDeclaration]:
    """The tools to send to a provider ``api`` that takes only function tools; any other tool
    is refused with a ``ToolError`` naming it and ``api``."""
    declarations: list[AIFunctionDeclaration] = []
    for tool in tools or ():
        if not isinstance(tool, AIFunctionDeclaration):
            raise ToolError(
                f"tool {tool.name!r} ({type(tool).__name__}) cannot be sent to {api}, which "
                "takes only function tools (AIFunctionDeclaration)"
            )
        declarations.append(tool)
    return declarations


class AIFunction(AIFunctionDeclaration):
    """A Python function (sync or async) the model can call; its parameter schema comes from
    its type hints and docstring. ``ToolError`` if no schema can be made."""

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        additional_properties: Mapping[str, Any] | None = None,
    ) -> None:
        fn_name = name or getattr(func, "__name__", None)
        summary, param_docs = _parse_docstring(inspect.getdoc(func) or "")
        self.func = func
        self._is_async = inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
            getattr(func, "__call__", None)  # noqa: B004 - callable objects with async __call__
        )
        self._model = _arguments_model(func, fn_name or "tool", param_docs)
        super().__init__(
            fn_name if isinstance(fn_name, str) else "",
            description if description is not None else summary,
            _schema_of(self._model),
            additional_properties=additional_properties,
        )

    def validate_arguments(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """The arguments converted to the parameter types; ``ToolArgumentsError`` if they do
        not fit (missing, unexpected or wrongly typed arguments, each named)."""
        given = arguments_object(self.name, arguments)
        from pydantic import ValidationError

        try:
            validated = self._model.model_validate(given)
        except ValidationError as exc:
            problems = "; ".join(
                f"argument {'.'.join(str(p) for p in e['loc']) or '(root)'!r}: {e['msg']}"
                for e in exc.errors()
            )
            raise ToolArgumentsError(f"invalid arguments for {self.name!r}: {problems}") from None
        return {field: getattr(validated, field) for field in type(validated).model_fields}

    async def invoke(self, arguments: Mapping[str, Any] | None = None) -> Any:
        """Validate ``arguments`` and call the function (awaiting it if it is async)."""
        kwargs = self.validate_arguments(arguments)
        result = self.func(**kwargs)
        if self._is_async or inspect.isawaitable(result):
            result = await typing.cast(Awaitable[Any], result)
        return result

    def as_declaration_only(self) -> AIFunctionDeclaration:
        """A declaration with this function's name, description and schema that the tool loop
        does not run: its calls go back to the caller (MEAI's ``AsDeclarationOnly``, for a
        tool the client runs itself)."""
        return AIFunctionDeclaration(
            self.name,
            self.description,
            self.parameters,
            additional_properties=self.additional_properties,
        )


class DelegatingAIFunction(AIFunction):
    """A function that forwards everything to the one it wraps; subclass to add behaviour."""

    def __init__(self, inner: AIFunction) -> None:
        self.inner = inner
        self.name = inner.name
        self.description = inner.description
        self.additional_properties = inner.additional_properties
        self.func = inner.func
        self.parameters = inner.parameters
        self._model = inner._model
        self._is_async = inner._is_async

    def validate_arguments(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        return self.inner.validate_arguments(arguments)

    async def invoke(self, arguments: Mapping[str, Any] | None = None) -> Any:
        return await self.inner.invoke(arguments)

    def get_service(self, kind: type[_T]) -> _T | None:
        return self if isinstance(self, kind) else self.inner.get_service(kind)

    def current(self) -> AITool | None:
        return self.inner.current()


class ApprovalRequiredAIFunction(DelegatingAIFunction):
    """A function that must not run until a person approves the call (a marker the tool loop
    enforces). ``when`` decides per call (:meth:`requires_approval`); ``allow_edits`` lets the
    person replace the arguments when approving.

    ``approvers`` limits who may answer (approve, edit or reject): a role name, a collection
    of role names (the answerer needs one) or ``predicate(principal, call) -> bool`` (one that
    raises means "not allowed"); ``distinct_approver=True`` refuses an answer from the
    principal whose request made the call (four eyes); ``allow_remember=True`` lets an
    approval of this tool be remembered for a while (a grant), so covered calls run without
    asking again. The consent engine decides all three."""

    def __init__(
        self,
        inner: AIFunction,
        *,
        when: ApprovalPredicate | None = None,
        allow_edits: bool = True,
        approvers: ApproverRule | None = None,
        distinct_approver: bool = False,
        allow_remember: bool = False,
    ) -> None:
        super().__init__(inner)
        self.when = when
        self.allow_edits = allow_edits
        if isinstance(approvers, str):
            approvers = frozenset({approvers})
        elif approvers is not None and not callable(approvers):
            approvers = frozenset(approvers)
            if not approvers or not all(isinstance(r, str) and r for r in approvers):
                raise ToolError("approvers must be a role name, role names or a predicate")
        self.approvers: frozenset[str] | Callable[[Principal, FunctionCallContent], bool] | None = (
            approvers
        )
        self.distinct_approver = bool(distinct_approver)
        self.allow_remember = bool(allow_remember)

    def approval_message(self, call_name: str) -> str:
        """The text a person sees when asked to approve a call."""
        return f"Approve {call_name}?"

    def requires_approval(self, arguments: Mapping[str, Any] | None) -> bool:
        """Whether this call needs a person's approval. ``when`` sees the arguments the tool
        would run with (validated, so ``"recursive": 1`` cannot slip past a check for
        ``True``); arguments that do not validate, a NaN anywhere in them and a ``when`` that
        raises all count as "yes": when in doubt, ask."""
        if self.when is None:
            return True
        try:
            converted = self.validate_arguments(arguments)
            return _holds_nan(converted) or bool(self.when(converted))
        except Exception:
            return True


def _holds_nan(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if item != item:
                return True
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
    return False


# -- decorators --------------------------------------------------------------------------


@overload
def ai_function(func: Callable[..., Any], /) -> AIFunction: ...


@overload
def ai_function(
    *, name: str | None = None, description: str | None = None
) -> Callable[[Callable[..., Any]], AIFunction]: ...


def ai_function(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
) -> AIFunction | Callable[[Callable[..., Any]], AIFunction]:
    """Turn a plain function into an ``AIFunction``: bare (``@ai_function``), with options
    (``@ai_function(name="x")``) or as a call (``ai_function(fn)``)."""

    def wrap(fn: Callable[..., Any]) -> AIFunction:
        if isinstance(fn, AIFunction):
            return fn
        return AIFunction(fn, name=name, description=description)

    return wrap if func is None else wrap(func)


@overload
def approval_required(func: Callable[..., Any] | AIFunction, /) -> ApprovalRequiredAIFunction: ...


@overload
def approval_required(
    *,
    when: ApprovalPredicate | None = None,
    allow_edits: bool = True,
    approvers: ApproverRule | None = None,
    distinct_approver: bool = False,
    allow_remember: bool = False,
) -> Callable[[Callable[..., Any] | AIFunction], ApprovalRequiredAIFunction]: ...


def approval_required(
    func: Callable[..., Any] | AIFunction | None = None,
    /,
    *,
    when: ApprovalPredicate | None = None,
    allow_edits: bool = True,
    approvers: ApproverRule | None = None,
    distinct_approver: bool = False,
    allow_remember: bool = False,
) -> (
    ApprovalRequiredAIFunction
    | Callable[[Callable[..., Any] | AIFunction], ApprovalRequiredAIFunction]
):
    """Require a person's approval before a tool runs: on a plain function or an
    ``AIFunction``, bare (``@approval_required``) or with a per-call predicate
    (``when=lambda args: args["path"].startswith("/")``, see
    :meth:`ApprovalRequiredAIFunction.requires_approval`); ``approvers``,
    ``distinct_approver`` and ``allow_remember`` say who may answer and whether an approval
    may be remembered (see :class:`ApprovalRequiredAIFunction`)."""

    def wrap(fn: Callable[..., Any] | AIFunction) -> ApprovalRequiredAIFunction:
        inner = fn if isinstance(fn, AIFunction) else AIFunction(fn)
        return ApprovalRequiredAIFunction(
            inner,
            when=when,
            allow_edits=allow_edits,
            approvers=approvers,
            distinct_approver=distinct_approver,
            allow_remember=allow_remember,
        )

    return wrap if func is None else wrap(func)


# -- schema building ---------------------------------------------------------------------

_HEADING = re.compile(r"(Args|Arguments|Parameters|Params|Returns?|Raises|Yields|Examples?)\s*:?")
_PARAM_SECTIONS = ("args", "arguments", "parameters", "params")
_SPHINX = re.compile(r":param\s+(?:[^:]*\s)?(\w+)\s*:(.*)")
_ITEM = re.compile(r"\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*(?::(.*))?")  # name (type): text


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The summary paragraph and the per-parameter descriptions (Google, Sphinx, NumPy)."""
    lines = doc.splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section, current, item_indent, numpy = "summary", None, None, False
    for line, below in zip(lines, [*lines[1:], ""], strict=False):
        text = line.strip()
        underlined = set(below.strip()) == {"-"}  # a NumPy heading: "name : type" items
        if sphinx := _SPHINX.fullmatch(text):
            section, current, item_indent = "params", sphinx[1], -1
            params[current] = sphinx[2].strip()
        elif text.startswith(":"):
            section = "other"
        elif (heading := _HEADING.fullmatch(text)) and (text.endswith(":") or underlined):
            section = "params" if heading[1].lower() in _PARAM_SECTIONS else "other"
            current, item_indent, numpy = None, None, underlined
        elif not text or set(text) == {"-"}:
            if not text and section == "summary" and summary:
                section = "body"
        elif section == "summary":
            summary.append(text)
        elif section == "params":
            indent = len(line) - len(line.lstrip())
            item_indent = indent if item_indent is None else item_indent
            item = _ITEM.fullmatch(text) if indent == item_indent else None
            if item and (numpy or item[2] is not None):
                current = item[1]
                params[current] = "" if numpy else item[2].strip()
            elif current:
                params[current] = (params[current] + " " + text).strip()
    return " ".join(summary), params


def _arguments_model(
    func: Callable[..., Any], name: str, docs: Mapping[str, str]
) -> type[BaseModel]:
    from pydantic import ConfigDict, Field, create_model

    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError) as exc:
        raise ToolError(f"cannot read the signature of {name!r}: {exc}") from exc
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception:
        hints = getattr(func, "__annotations__", {})
    fields: dict[str, Any] = {}
    for pname, param in signature.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolError(f"tool {name!r}: positional-only parameter {pname!r} is not supported")
        annotation = hints.get(pname, Any)
        default = ... if param.default is param.empty else param.default
        fields[pname] = (annotation, Field(default, description=docs.get(pname) or None))
    try:
        return create_model(
            f"{name}_arguments",
            __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=True),
            **fields,
        )
    except Exception as exc:
        raise ToolError(f"cannot build a parameter schema for {name!r}: {exc}") from exc


def _schema_of(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.setdefault("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)
    return schema
