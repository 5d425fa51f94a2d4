"""``FunctionInvokingChatClient``: the tool loop, with approvals and questions for a person
(the next request's answers are paired with their requests by the consent engine's plan)."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import aclosing
from functools import partial
from typing import Any

from .._client import ChatClient, ChatMessages
from .._contents import AIContent, FunctionCallContent, FunctionResultContent, TextContent
from .._exceptions import ExpiredRequestError
from .._hitl_contents import InterruptRequestContent, ToolApprovalRequestContent
from .._messages import ChatMessage, as_messages
from .._options import ChatOptions
from .._responses import ChatResponse, ChatResponseUpdate
from .._role_and_finish_reason import ChatFinishReason, ChatRole
from .._streams import close_stream
from .._tool_registry import ToolSource, tool_map
from .._tools import AIFunction, AIFunctionDeclaration, AITool
from .._usage import UsageDetails
from ..consent._grants import Grant, may_remember
from ..consent._oversight import (
    LOCAL_AUDIENCE,
    GovernanceStore,
    Oversight,
    principal_of,
    remembered_verdict,
    take_oversight,
)
from ..consent._plan import (
    ResumePlan,
    ScheduledCall,
    ToolStartGuard,
    check,
    pair,
    schedule,
    take_plan,
)
from ..consent._rules import find_tool, gate, question_request_id
from ._delegating import DelegatingChatClient
from ._invocation import (
    FunctionInvocationContext,
    FunctionInvoker,
    InvocationOutcome,
    invoke_call,
    not_found_text,
    raise_failures,
)
from ._ledger import Ledger
from ._tool_tracing import ToolTracing, link_to_paused
from ._turns import (
    TurnRecorder,
    bad_arguments,
    duplicate_ids,
    gate_approvals,
    hold_unrun,
    new_id,
    next_options,
    pending_calls,
    tool_message,
    without_functions,
)

_log = logging.getLogger("agui_chat.tools")


class FunctionInvokingChatClient(DelegatingChatClient):
    """Runs the tools the model calls, and pauses for a person where a tool needs one.

    - ``max_iterations`` (40): round trips whose calls run, per request; one more follows
      for the answer, with the function tools withdrawn (hosted tools stay).
    - ``max_consecutive_errors`` (3): round trips in a row with a failed call before the
      failure is raised: the exception itself, or an ``ExceptionGroup`` of the batch's.
    - ``allow_concurrent_invocation``: run the calls of one batch concurrently.
    - ``include_detailed_errors``: tell the model the exception text of a failed tool.
    - ``terminate_on_unknown_calls``: hand calls to unknown tools to the caller (calls to
      declaration-only tools, ``AIFunctionDeclaration``, always are).
    - ``additional_tools``: tools that can run but are not advertised; tool sources (an
      ``MCPToolset``) are read again on every round trip. A name may be used once across
      these and ``ChatOptions.tools`` (``DuplicateToolError``).
    - ``function_invoker``: called with the ``FunctionInvocationContext`` instead of the
      function (MEAI's ``FunctionInvoker``); returns the result or an awaitable of it.
    - ``approval_store``: an ``ApprovalStore`` that keeps the audit trail of the calls decided
      here and the remembered approvals (grants), as ``AGUIServer`` does: the thread is the
      options' ``conversation_id``, the principal the ``approver`` of the answers. Without
      one, nothing is recorded and ``remember`` is refused.
    """

    def __init__(
        self,
        inner_client: ChatClient,
        *,
        max_iterations: int = 40,
        max_consecutive_errors: int = 3,
        allow_concurrent_invocation: bool = False,
        include_detailed_errors: bool = False,
        terminate_on_unknown_calls: bool = False,
        additional_tools: Iterable[AITool | ToolSource] = (),
        function_invoker: FunctionInvoker | None = None,
        approval_store: GovernanceStore | None = None,
    ) -> None:
        super().__init__(inner_client)
        self.telemetry = inner_client.get_service(ToolTracing) or ToolTracing()
        if max_iterations < 1:
            raise ValueError("max_iterations must be an int >= 1")
        if max_consecutive_errors < 0:
            raise ValueError("max_consecutive_errors must be an int >= 0")
        self.max_iterations = max_iterations
        self.max_consecutive_errors = max_consecutive_errors
        self.allow_concurrent_invocation = allow_concurrent_invocation
        self.include_detailed_errors = include_detailed_errors
        self.terminate_on_unknown_calls = terminate_on_unknown_calls
        self.additional_tools = list(additional_tools)
        tool_map(self.additional_tools, None)  # two tools of one name: refused here
        self.function_invoker = function_invoker
        if approval_store is not None and not approval_store.keeps_governance:
            raise ValueError(
                f"{type(approval_store).__name__} keeps no audit trail or grants, so it cannot "
                "be the tool loop's approval_store"
            )
        self.approval_store = approval_store

    def _oversight(self, options: ChatOptions | None) -> Oversight | None:
        """This loop's own oversight of a request (with an ``approval_store``)."""
        if self.approval_store is None:
            return None
        thread = options.conversation_id if options is not None else None
        return Oversight(self.approval_store, LOCAL_AUDIENCE, thread)

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any]) -> None:
        """Raise ``TypeError`` for a keyword this class does not take."""
        unknown = set(settings) - (set(inspect.signature(cls).parameters) - {"inner_client"})
        if unknown:
            raise TypeError(f"unknown function invocation setting(s): {', '.join(sorted(unknown))}")

    async def _get_response(
        self, messages: ChatMessages, options: ChatOptions | None
    ) -> ChatResponse[Any]:
        loop = _Loop(self, as_messages(messages), options, streaming=False)
        output = [item async for item in loop.run() if isinstance(item, ChatMessage)]
        last = loop.last_response
        return ChatResponse(
            output,
            response_id=last.response_id if last else None,
            conversation_id=last.conversation_id if last else None,
            model_id=last.model_id if last else None,
            created_at=last.created_at if last else None,
            finish_reason=loop.finish_reason,
            usage=loop.usage,
            additional_properties=last.additional_properties if last else None,
            raw_representation=last.raw_representation if last else None,
        )

    def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        loop = _Loop(self, as_messages(messages), options, streaming=True)
        return loop.run()  # type: ignore[return-value]


class _Loop:
    """One request through the tool loop. ``run()`` yields streamed updates (streaming) and
    the messages the loop adds to the transcript (both modes)."""

    def __init__(
        self,
        owner: FunctionInvokingChatClient,
        history: list[ChatMessage],
        options: ChatOptions | None,
        *,
        streaming: bool,
    ) -> None:
        self.owner = owner
        self.history = history
        # A plan handed down by a caller that checked the answers itself (AGUIServer): the
        # loop resumes with it as given, and passes the options on without it.
        self.plan: ResumePlan | None = take_plan(options)
        # Where the request's calls are decided and recorded (AGUIServer hands its own down).
        self.oversight = take_oversight(options) or owner._oversight(options)
        self.ledger = None if self.oversight is None else Ledger(self.oversight, owner.telemetry)
        self.options = options
        self.streaming = streaming
        self.tools: dict[str, AITool] | None = None  # built when first needed
        self.usage: UsageDetails | None = None
        self.finish_reason: ChatFinishReason | None = None
        self.last_response: ChatResponse | None = None
        self.consecutive_errors = 0
        self.stopped = False  # the request ends here (a pause, or a call that ended it)
        self.current_options = options  # the options of the round trip under way
        self.history_sent: list[ChatMessage] = []  # what the next round trip sends
        self.own_span = False  # whether the request runs in its own orchestrate_tools span
        self.recording = False  # whether anything records spans, events or metrics
        #: The calls of this turn a remembered approval lets run without asking: each call
        #: object as screened, with its grant, by call id.
        self.covered: dict[str, tuple[FunctionCallContent, Grant]] = {}
        self.covering = False  # whether this turn's calls may be run on a grant

    def _new_turn(self, last_round: bool) -> None:
        """A new model turn: grants are read again when needed (one revoked meanwhile, on any
        worker, no longer counts); none covers the last round's calls, which never run."""
        self.covering = not last_round and self.oversight is not None
        self.covered.clear()  # a grant covers the call it was found for, in its turn only
        if self.oversight is not None:
            self.oversight.forget_grants()

    def _gate(self, contents: list[AIContent]) -> bool:
        """The screen of a round trip whose calls may run: the consent engine's gates."""
        return gate_approvals(contents, self.tools or {}, self.owner.telemetry, self.covered)

    async def _cover(self, contents: Sequence[AIContent]) -> None:
        """Find, before the screen gates them, the calls a live grant covers (only for tools
        that allow remembering, so a loop without grants reads nothing)."""
        oversight = self.oversight
        if oversight is None or not self.covering:
            return
        for c in contents:
            if c.__class__ is not FunctionCallContent:
                continue
            assert isinstance(c, FunctionCallContent)
            if c.informational_only or c.unparseable:
                continue
            tool = find_tool(self.tools or {}, c.name)
            if tool is None or not may_remember(tool) or gate(tool, c.arguments) is None:
                continue
            grant = await oversight.covering(c)
            if grant is not None:
                self.covered[c.call_id] = (c, grant)
            else:  # another call under an id covered before in this turn: it asks
                self.covered.pop(c.call_id, None)

    def _finish(self, reason: ChatFinishReason) -> ChatResponseUpdate | None:
        """Record why the loop stopped early; in streaming mode, the update that says so."""
        self.finish_reason = reason
        return ChatResponseUpdate(finish_reason=reason) if self.streaming else None

    def _out(self, message: ChatMessage) -> ChatResponseUpdate | ChatMessage:
        """A message the loop adds to the transcript, as the caller receives it."""
        if not self.streaming:
            return message
        return ChatResponseUpdate(
            message.role,
            message.contents,
            message_id=message.message_id,
            author_name=message.author_name,
            additional_properties=message.additional_properties,
        )

    def run(self) -> AsyncIterator[ChatResponseUpdate | ChatMessage]:
        """The request's steps, in its own span when one opens (``_tool_tracing.py``):
        without an SDK they come straight from ``_steps()``, as if no tracing existed."""
        telemetry = self.owner.telemetry
        self.recording = telemetry.records()  # once per request: no SDK, no tracing calls
        if not (self.recording and telemetry.opens_request_span()):
            return self._steps()
        self.own_span = True
        return telemetry.in_request_span(self._steps(), lambda: self.usage)

    async def _steps(self) -> AsyncIterator[ChatResponseUpdate | ChatMessage]:
        """Answer the paused run, then round trips until the model answers; the last one
        withdraws the function tools, and its screen marks their calls never to run. A streamed
        turn's updates pass inline here: one generator hop per update (bench/README.md)."""
        async with aclosing(self._resume_paused()) as resumed:
            async for item in resumed:
                yield item
        owner = self.owner
        for iteration in range(owner.max_iterations + 1):
            if self.stopped:
                return
            last_round = iteration == owner.max_iterations
            options = self.current_options
            if iteration or self.tools is None:  # a tool may have changed them (as in MEAI)
                self.tools = tool_map(owner.additional_tools, options)
            self._new_turn(last_round)
            if last_round:
                options = without_functions(options)
                screen: Callable[[list[AIContent]], bool] = partial(hold_unrun, tools=self.tools)
            else:
                screen = self._gate
            if not self.streaming:
                turn = await owner.inner_client.get_response(self.history_sent, options)
                for message in turn.messages:
                    await self._cover(message.contents)
                    screen(message.contents)
                    yield self._out(message)
            else:
                stream = owner.inner_client.get_streaming_response(self.history_sent, options)
                try:
                    update = await anext(stream, None)
                    if update is None:
                        return
                    # A hand-off stream (the retry middleware) steps aside after the first
                    # update: read the stream it wraps directly from here on.
                    rest = getattr(stream, "handed_over", None) or stream
                    recorder = TurnRecorder()
                    deltas = recorder.deltas
                    await self._cover(update.contents)
                    saw_calls = recorder.add(update, screen)
                    message_id, role, author = update.message_id, update.role, update.author_name
                    yield update
                    async for update in rest:
                        # Hot path (bench/README.md): a text delta that continues the message
                        # is kept as it came. Unpacking tests for "exactly one content".
                        try:
                            [content] = update.contents
                        except ValueError:
                            content = None
                        if (
                            content.__class__ is TextContent
                            and (update.message_id == message_id or update.message_id is None)
                            and (update.role is role or update.role is None)
                            and (update.author_name is author or update.author_name is None)
                        ):
                            deltas.append(content)
                        else:
                            await self._cover(update.contents)
                            saw_calls = recorder.add(update, screen) or saw_calls
                            message_id, role = update.message_id, update.role
                            author = update.author_name
                        yield update
                finally:
                    await close_stream(stream)  # what a caller that stops early leaves open
                if not saw_calls:
                    return  # the model answered: the caller has every update already
                turn = recorder.build()
            if turn.usage is not None:
                self.usage = turn.usage if self.usage is None else self.usage + turn.usage
            self.last_response, self.finish_reason = turn, turn.finish_reason
            for item in await self._act_on(turn, last_round, iteration):
                yield item

    async def _resume_paused(self) -> AsyncGenerator[ChatResponseUpdate | ChatMessage, None]:
        """Answer the paused run, with MEAI's transcript shape: the rebuilt call messages,
        the rejections' results, the approved calls' results; the model's history gets the
        same block at the plan's anchor (without the calls when the service keeps them)."""
        plan = self.plan
        if plan is None:
            self.tools = tool_map(self.owner.additional_tools, self.options)
            oversight = self.oversight
            thread = self.options.conversation_id if self.options is not None else None
            try:
                pairs = pair(self.history)  # the consent engine's three steps, once
                checked = check(
                    pairs, self.tools, thread_id=thread, keeps_grants=oversight is not None
                )
                plan = schedule(pairs, checked, self.history)
            except ExpiredRequestError as exc:
                self.owner.telemetry.expired(exc.request_ids)
                raise
        history = self.history_sent = plan.model_history
        if not (plan.to_run or plan.rejected):
            return
        ledger = self.ledger if plan.guard is None else None  # a server records its own
        if ledger is not None:
            assert self.oversight is not None
            if self.oversight.principal is None:
                self.oversight.principal = principal_of(plan.verdicts)
            ledger.verdicts.update(plan.verdicts)
            await ledger.rejected(plan.rejected)
        resumed = {s.call.call_id for s in plan.to_run} | {r.call_id for r in plan.rejected}
        if self.recording:
            paused = self.owner.telemetry.resumed(plan.answered, resumed)
            if self.own_span:  # AGUIServer's run span links to the paused run itself
                link_to_paused(paused)
        at = plan.anchor
        if not (self.options is not None and self.options.conversation_id):
            history[at:at] = plan.rebuilt
            at += len(plan.rebuilt)
        for message in plan.rebuilt:
            yield self._out(message)
        outcomes = await self._invoke(plan.to_run, history, iteration=0, guard=plan.guard or ledger)
        if ledger is not None:
            await ledger.finished(outcomes)
        done = [r.call_id for r in plan.rejected]
        done += [o.call.call_id for o in outcomes if o.result is not None]
        plan.mark_handled(done)
        results: list[AIContent] = [o.result for o in outcomes if o.result is not None]
        rejected: list[AIContent] = list(plan.rejected)
        for batch in (rejected, results):
            if batch:
                message = tool_message(batch)
                history.insert(at, message)
                at += 1
                yield self._out(message)
        questions = self._questions(outcomes)
        if questions:
            yield self._out(ChatMessage(ChatRole.ASSISTANT, questions, message_id=new_id()))
            if update := self._finish(ChatFinishReason.INPUT_REQUIRED):
                yield update
            self.stopped = True
            return
        self._count_errors(results)
        self.stopped = any(o.terminate for o in outcomes)

    async def _act_on(
        self, turn: ChatResponse, last_round: bool, iteration: int
    ) -> list[ChatResponseUpdate | ChatMessage]:
        """Run the turn's calls, answer them with an error, or hand them to the caller;
        returns what the caller receives. ``self.stopped`` says whether the loop ends here.
        Calls whose id the turn uses twice get an error and none runs."""
        self.stopped = True
        duplicated, results = duplicate_ids(turn.messages)
        requested = any(
            isinstance(c, ToolApprovalRequestContent) and c.tool_call.call_id not in duplicated
            for m in turn.messages
            for c in m.contents
        )
        calls = pending_calls(turn.messages)  # marks the calls the service ran itself
        if last_round or (not calls and not requested and not duplicated):
            return []
        to_run: list[ScheduledCall] = []
        handed_off = False
        for call in calls:
            if call.call_id in duplicated:
                continue
            tool = find_tool(self.tools or {}, call.name)
            if isinstance(tool, AIFunction):
                if call.unparseable:
                    results.append(bad_arguments(call))
                else:
                    to_run.append(ScheduledCall(call, tool))
            elif isinstance(tool, AIFunctionDeclaration) or (
                tool is None and self.owner.terminate_on_unknown_calls
            ):
                handed_off = True
            else:
                _log.warning("model called unknown tool %r", call.name)
                results.append(FunctionResultContent(call.call_id, not_found_text(call.name)))
                self.owner.telemetry.tool_not_found(call)
        history = self.history_sent = [*self.history_sent, *turn.messages]
        ledger = self._remembered(to_run)
        outcomes = await self._invoke(
            to_run, history, iteration=iteration, early=results, guard=ledger
        )
        if ledger is not None:
            await ledger.finished(outcomes)
        for o in outcomes:
            if o.result is not None:  # ran: a stacked loop or a replay must not run it
                o.call.informational_only = True
                results.append(o.result)
        questions = self._questions(outcomes)
        out: list[ChatResponseUpdate | ChatMessage] = []
        if results:
            history.append(message := tool_message(results))
            out.append(self._out(message))
        if questions:
            out.append(self._out(ChatMessage(ChatRole.ASSISTANT, questions, message_id=new_id())))
        if questions or requested or handed_off:
            paused = questions or requested  # for a person; else handed to the caller
            reason = ChatFinishReason.INPUT_REQUIRED if paused else ChatFinishReason.TOOL_CALLS
            if done := self._finish(reason):
                out.append(done)
            return out
        self._count_errors(results)
        if any(o.terminate for o in outcomes):
            return out
        options = self.current_options = next_options(self.current_options, turn)
        if options is not None and options.conversation_id:
            self.history_sent = [history[-1]] if results else []
        self.stopped = False
        return out

    def _remembered(self, to_run: Sequence[ScheduledCall]) -> Ledger | None:
        """The ledger, with the verdicts of the calls of ``to_run`` a grant lets run."""
        ledger = self.ledger
        if ledger is not None and self.covered:
            assert self.oversight is not None
            requester = self.oversight.principal
            for item in to_run:
                covered = self.covered.pop(item.call.call_id, None)
                if covered is not None and covered[0] is item.call:
                    verdict = remembered_verdict(item.call, covered[1], requester)
                    ledger.verdicts[item.call.call_id] = verdict
        return ledger

    async def _invoke(
        self,
        scheduled: Sequence[ScheduledCall],
        history: Sequence[ChatMessage],
        *,
        iteration: int,
        early: Sequence[AIContent] = (),
        guard: ToolStartGuard | None = None,
    ) -> list[InvocationOutcome]:
        """Run a batch. Serially at the error limit, the first failure is raised at once
        (with ``early``, the batch's results so far), as MEAI does; concurrently, every call
        runs first."""
        count = len(scheduled)

        async def one(index: int, item: ScheduledCall) -> InvocationOutcome:
            context = FunctionInvocationContext(
                function=item.function,
                arguments=dict(item.call.arguments or {}),
                call=item.call,
                messages=history,
                options=self.current_options,
                iteration=iteration,
                function_call_index=index,
                function_count=count,
                is_streaming=self.streaming,
            )
            invocation = invoke_call(
                context,
                answers=item.answers,
                include_detailed_errors=self.owner.include_detailed_errors,
                invoker=self.owner.function_invoker,
                guard=guard,
            )
            if not self.recording:
                return await invocation
            return await self.owner.telemetry.tool(item.call, item.function, invocation)

        if self.owner.allow_concurrent_invocation and count > 1:
            return list(await asyncio.gather(*(one(i, s) for i, s in enumerate(scheduled))))
        at_limit = self.consecutive_errors >= self.owner.max_consecutive_errors
        outcomes: list[InvocationOutcome] = []
        for i, item in enumerate(scheduled):
            outcome = await one(i, item)
            outcomes.append(outcome)
            if at_limit and outcome.failed and outcome.result is not None:
                self._count_errors([*early, *(o.result for o in outcomes if o.result)])
            if outcome.terminate:
                break
        return outcomes

    def _questions(self, outcomes: Sequence[InvocationOutcome]) -> list[AIContent]:
        questions: list[AIContent] = []
        for o in outcomes:
            if (q := o.input_required) is not None:
                question = InterruptRequestContent(
                    question_request_id(o.call.call_id, q.digest),  # a new question, a new id
                    reason=q.reason,
                    message=q.message,
                    tool_call_id=o.call.call_id,
                    response_schema=q.response_schema,
                    expires_at=q.expires_at,
                    metadata=q.metadata,
                    key=q.key,
                )
                self.owner.telemetry.requested(question)
                questions.append(question)
        return questions

    def _count_errors(self, results: Sequence[AIContent]) -> None:
        """MEAI's rule: a round trip with a failed result counts, a clean one resets the
        count; past ``max_consecutive_errors`` the batch's exceptions are raised."""
        failures = [
            r.exception
            for r in results
            if isinstance(r, FunctionResultContent) and isinstance(r.exception, Exception)
        ]
        if not failures:
            self.consecutive_errors = 0
            return
        self.consecutive_errors += 1
        if self.consecutive_errors > self.owner.max_consecutive_errors:
            _log.warning(
                "tool calls failed %d round trips in a row; giving up", self.consecutive_errors
            )
            raise_failures(failures, self.consecutive_errors)
