"""The names agui_chat's telemetry emits: the GenAI semantic conventions' and our own.

The ``gen_ai.*``, ``server.*`` and ``error.type`` names are those of the OpenTelemetry
Semantic Conventions v1.44.0 (GenAI: status Development); a test compares them with the
``opentelemetry-semantic-conventions`` package's constants. Names under ``agui_chat.*``
are ours: the conventions have nothing for a person in the loop or an AG-UI run.
"""

from __future__ import annotations

SEMCONV_VERSION = "1.44.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
#: The instrumentation scope of every tracer and meter agui_chat uses.
SCOPE = "agui_chat"

# -- GenAI semantic conventions --------------------------------------------------------------
OPERATION_NAME = "gen_ai.operation.name"
PROVIDER_NAME = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_TEMPERATURE = "gen_ai.request.temperature"
REQUEST_TOP_P = "gen_ai.request.top_p"
REQUEST_TOP_K = "gen_ai.request.top_k"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
REQUEST_STOP_SEQUENCES = "gen_ai.request.stop_sequences"
REQUEST_SEED = "gen_ai.request.seed"
REQUEST_FREQUENCY_PENALTY = "gen_ai.request.frequency_penalty"
REQUEST_PRESENCE_PENALTY = "gen_ai.request.presence_penalty"
REQUEST_STREAM = "gen_ai.request.stream"
OUTPUT_TYPE = "gen_ai.output.type"
CONVERSATION_ID = "gen_ai.conversation.id"
RESPONSE_ID = "gen_ai.response.id"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
TOKEN_TYPE = "gen_ai.token.type"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_DESCRIPTION = "gen_ai.tool.description"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
ERROR_TYPE = "error.type"

METRIC_OPERATION_DURATION = "gen_ai.client.operation.duration"
METRIC_TOKEN_USAGE = "gen_ai.client.token.usage"
#: The conventions' advisory bucket boundaries.
DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
                    40.96, 81.92)  # fmt: skip
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304,
                 16777216, 67108864)  # fmt: skip

# -- ours ---------------------------------------------------------------------------------------
#: How a tool call ended: ``ran``, ``failed``, ``input_required``, ``rejected``, ``not_found``.
TOOL_OUTCOME = "agui_chat.tool.outcome"
#: On a streaming chat span: ``completed`` (the stream ended) or ``stopped`` (the caller
#: stopped reading before the end; the span ends when the stream is closed).
STREAM_END = "agui_chat.stream.end"
REQUEST_ID = "agui_chat.request.id"
REQUEST_KIND = "agui_chat.request.kind"  # approval | input
DECISION = "agui_chat.decision"  # approved | rejected | edited | answered | cancelled
REASON_GIVEN = "agui_chat.approval.reason_given"
REASON = "agui_chat.approval.reason"  # only with capture_content
EDITED_ARGUMENTS = "agui_chat.approval.edited_arguments"  # only with capture_content
INPUT_PAYLOAD = "agui_chat.input.payload"  # only with capture_content
QUESTION = "agui_chat.input.message"  # only with capture_content
DECISION_SECONDS = "agui_chat.decision.seconds"

EVENT_APPROVAL_REQUESTED = "agui_chat.approval.requested"
EVENT_APPROVED = "agui_chat.approval.approved"
EVENT_REJECTED = "agui_chat.approval.rejected"
EVENT_EDITED = "agui_chat.approval.edited"
EVENT_INPUT_REQUESTED = "agui_chat.input.requested"
EVENT_ANSWERED = "agui_chat.input.answered"
EVENT_CANCELLED = "agui_chat.input.cancelled"
EVENT_EXPIRED = "agui_chat.request.expired"

METRIC_APPROVALS = "agui_chat.approvals"
METRIC_DECISION_DURATION = "agui_chat.decision.duration"
DECISION_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400)
