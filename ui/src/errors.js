// Failures in words. The server's RUN_ERROR codes (docs/errors.md) each get a sentence a
// person can act on; transport failures are told apart: unreachable, refused, not AG-UI, or
// a stream the page could not read. Whatever a server or the stream said (a RUN_ERROR's
// message and code, a parse error) is shown through the display function's twin: one line,
// hidden characters escaped, a long one cut with a marker and the whole a click away.

import { restoreExact } from "./exact.js";
import { shownText, visible } from "./shown.js";

export const RUN_ERROR_WORDS = {
  AGENT_ERROR: "The agent hit an internal error and stopped. Try again, or start a new conversation.",
  MODEL_ERROR: "The model service failed. Try again in a moment.",
  TOOL_ERROR: "A tool could not be run.",
  RESUME_INCOMPLETE: "The answers did not cover every request of the pause; answer all of them.",
  RESUME_DUPLICATE_ANSWER: "A request was answered twice in one go.",
  RESUME_UNKNOWN_INTERRUPT:
    "The server does not recognise these requests (it may have restarted with a new key). Start a new conversation.",
  RESUME_UNKNOWN_TOOL: "The server no longer has the tool these requests were for.",
  RESUME_EXPIRED: "A request expired before it was answered; it can only be cancelled now.",
  APPROVAL_EXPIRED: "The approval expired before it was answered; it can only be rejected now.",
  INTERRUPT_EXPIRED: "The question expired before it was answered; it can only be cancelled now.",
  APPROVAL_STALE: "This approval is too old to answer. Start a new conversation.",
  INTERRUPT_STALE: "This question is too old to answer. Start a new conversation.",
  RESUME_INVALID_PAYLOAD: "The server refused an answer as invalid.",
  RESUME_UNKNOWN_PAYLOAD_KEY: "The server refused an answer it could not read in full (an unknown field); nothing ran.",
  RESUME_ALREADY_CONSUMED: "These requests were already answered.",
  TOOL_RESULT_NOT_ISSUED:
    "The conversation holds a tool result the server did not produce, so nothing ran. Start a new conversation.",
  APPROVAL_EDIT_NOT_ALLOWED: "The server does not allow editing the arguments of this call.",
  APPROVAL_STORE_UNAVAILABLE:
    "The server cannot record approvals right now, so nothing ran. Try again shortly.",
  APPROVAL_STORE_MISCONFIGURED:
    "The server's approval store refuses it (a setting to fix), so nothing ran and your answer was not used. Send it again once it is fixed.",
  APPROVAL_STORE_VALUE_REJECTED: "The server's approval store could not hold this answer, so nothing ran.",
  RESUME_IN_PROGRESS: "These answers are being run by another request now; nothing ran twice. Send them again shortly.",
  RESUME_CLAIM_HELD: "These answers are held by a run that has not started yet; nothing was used. Send them again shortly.",
  APPROVAL_STORE_RESET:
    "The server lost its record of approvals since these requests were made, so nothing ran. Start a new conversation.",
  APPROVAL_FORGED: "The server did not issue this approval (or it was altered), so nothing ran.",
  INTERRUPT_FORGED: "The server did not issue this question (or it was altered), so nothing ran.",
  APPROVAL_THREAD_MISMATCH: "This approval belongs to another conversation.",
  INTERRUPT_THREAD_MISMATCH: "This question belongs to another conversation.",
  APPROVAL_CALL_MISMATCH: "The approval does not match the call it was issued for, so nothing ran.",
  INTERRUPT_CALL_MISMATCH: "The answer does not match the call that asked, so nothing ran.",
  AUDIENCE_MISMATCH: "These requests were issued by another server and cannot be answered here.",
  APPROVAL_AUDIENCE_MISMATCH: "This approval was issued by another server and cannot be answered here.",
  INTERRUPT_AUDIENCE_MISMATCH: "This question was issued by another server and cannot be answered here.",
  APPROVAL_KEY_CHANGED:
    "The server's signing key changed since this approval was issued, so it cannot be answered. Start a new conversation.",
  INTERRUPT_KEY_CHANGED:
    "The server's signing key changed since this question was asked, so it cannot be answered. Start a new conversation.",
  REQUEST_TIMEOUT: "The server gave up waiting for the request the page sent. Try again.",
  INVALID_JSON: "The server could not read the request the page sent.",
  INVALID_INPUT: "The server refused the request the page sent as invalid.",
  JSON_TOO_DEEP: "The conversation nests too deeply for the server.",
  BODY_TOO_LARGE: "The conversation is too large for the server. Start a new conversation.",
  INVALID_CONTENT_LENGTH: "The server could not read the request the page sent.",
  METHOD_NOT_ALLOWED: "The server does not accept AG-UI runs at this address.",
  UNSUPPORTED_MEDIA_TYPE: "The server does not accept AG-UI runs at this address.",
  PROTOCOL_VERSION: "The server speaks a version of AG-UI this page does not.",
  INVALID_DISPLAY_REQUEST: "The server could not show what the page asked about.",
  APPROVER_NOT_ALLOWED:
    "You may not answer this request: the tool lets only certain people answer it. Nothing was used up, so someone allowed can still answer it.",
  APPROVER_IS_REQUESTER:
    "You asked for this call, so another person must answer it (four eyes). Nothing was used up.",
  APPROVER_UNKNOWN:
    "This request needs an answer from an identified person, and the server could not tell who answered (sign in). Nothing was used up.",
  IDENTIFY_FAILED: "The server could not tell who sent this request, so it refused it; nothing ran.",
  GRANTS_NOT_KEPT: "This server keeps no remembered approvals.",
  INVALID_GRANTS_REQUEST: "The server could not read the page's request about remembered approvals.",
  GRANT_NOT_FOUND: "That remembered approval is no longer there: it expired or was revoked already.",
};

/** A tagged error raised by the page's own fetch wrapper. */
export class PageError extends Error {
  constructor(kind, message, details = {}) {
    super(message);
    this.name = "PageError";
    this.kind = kind;
    this.details = details;
  }
}

/** Outside text for an error's detail: one escaped line, cut with a marker when long. */
function detailOf(text) {
  return text ? shownText(String(text), { multiline: false, limit: 400 }) : null;
}

/** `{title, detail, code}` for a RUN_ERROR event (`detail` a display, or null). */
export function describeRunError(code, message) {
  const known = typeof code === "string" && Object.hasOwn(RUN_ERROR_WORDS, code) ? RUN_ERROR_WORDS[code] : "";
  return {
    title: known || "The agent reported an error.",
    detail: message && message !== known ? detailOf(message) : null,
    code: code ? visible(String(code)) : "",
  };
}

/** `{kind, title, detail, code}` for anything that made a run fail. */
export function describeFailure(error, endpoint) {
  if (error instanceof PageError) {
    if (error.kind === "unreachable")
      return {
        kind: "unreachable",
        title: `The agent server at ${endpoint} cannot be reached.`,
        detail: detailOf("Your conversation is kept. The page will tell you when the server is back."),
        code: "",
      };
    if (error.kind === "not-agui")
      return {
        kind: "not-agui",
        title: `The server at ${endpoint} is not an AG-UI agent: it answered with ${visible(error.details.what)}, not an AG-UI event stream.`,
        detail: detailOf("Check the address; your conversation is kept."),
        code: "",
      };
    if (error.kind === "refused") {
      const { status, code, message } = error.details;
      const described = describeRunError(code, message);
      return {
        kind: "refused",
        title: code ? described.title : `The server refused the request (HTTP ${status}).`,
        detail: described.detail,
        code: described.code || `HTTP ${status}`,
      };
    }
  }
  const text = String((error && error.message) || error || "unknown error");
  return {
    kind: "unreadable",
    title: "The agent's answer could not be read, so the page stopped reading it; your conversation is kept as it was before this run.",
    detail: detailOf(text),
    code: "",
  };
}

/** The page's fetch: failures become PageErrors the page can put in words. */
export async function guardedFetch(url, init) {
  // Integers past 2^53 an edit kept exactly go out as their digits (exact.js).
  if (init && typeof init.body === "string") init = { ...init, body: restoreExact(init.body) };
  let response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    if (error && error.name === "AbortError") throw error;
    throw new PageError("unreachable", `cannot reach ${url}`);
  }
  const type = (response.headers.get("content-type") || "").split(";")[0].trim().toLowerCase();
  const isHtml = type === "text/html" || type === "application/xhtml+xml";
  if (!response.ok) {
    let body = null;
    if (type === "application/json" || type.endsWith("+json")) {
      try {
        body = await response.json();
      } catch {
        body = null;
      }
    }
    if (!body && isHtml)
      throw new PageError("not-agui", "HTML error page", {
        what: `an HTML page (HTTP ${response.status})`,
      });
    throw new PageError("refused", `HTTP ${response.status}`, {
      status: response.status,
      code: body && typeof body.code === "string" ? body.code : "",
      message: body && typeof body.message === "string" ? body.message : "",
    });
  }
  if (type !== "text/event-stream" && type !== "application/vnd.ag-ui.event+proto") {
    throw new PageError("not-agui", `content type ${type}`, {
      what: isHtml ? "an HTML page" : `${type || "a response without a content type"}`,
    });
  }
  return response;
}
