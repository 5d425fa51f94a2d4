// The cards of a pause: one approval card per gated call, one question card per
// request_input. A card records a decision; the pause's answers go out together, only once
// every card is decided (AG-UI requires a resume to cover every interrupt), and only once.

import { h, prettyJson, uid } from "./dom.js";
import { schemaForm } from "./schemaform.js";

/** An approval is keyed on toolCallId, whatever the reason says (agui-wire §5.4). */
export function isApproval(interrupt) {
  return typeof interrupt.toolCallId === "string" || interrupt.reason === "tool_approval";
}

export function isExpired(interrupt, now = Date.now()) {
  if (!interrupt.expiresAt) return false;
  const at = Date.parse(interrupt.expiresAt);
  return !Number.isNaN(at) && at <= now;
}

function countdown(interrupt, now) {
  if (!interrupt.expiresAt) return "";
  const at = Date.parse(interrupt.expiresAt);
  if (Number.isNaN(at)) return "";
  if (isExpired(interrupt, now))
    return isApproval(interrupt)
      ? "Expired: this request can only be rejected now."
      : "Expired: this question can only be cancelled now.";
  const left = Math.max(1, Math.ceil((at - now) / 1000));
  const hours = Math.floor(left / 3600);
  const minutes = Math.floor((left % 3600) / 60);
  const seconds = String(left % 60).padStart(2, "0");
  return hours
    ? `Expires in ${hours} h ${String(minutes).padStart(2, "0")} min`
    : `Expires in ${minutes}:${seconds}`;
}

function findCall(messages, callId) {
  for (const m of messages) for (const c of m.toolCalls || []) if (c.id === callId) return c;
  return null;
}

function parseArgs(text) {
  try {
    const value = JSON.parse(text || "{}");
    return value && typeof value === "object" && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

/** The shell every card shares: a labelled group, its heading, expiry line, decided line. */
function shell(kind, title) {
  const titleId = uid("card-title");
  const heading = h("h2", { id: titleId, tabindex: "-1", text: title });
  const expiry = h("p", { class: "expiry", hidden: true });
  const decidedText = h("p", { class: "decided-text", role: "status" });
  const change = h("button", { type: "button", class: "secondary", text: "Change" });
  const decided = h("div", { class: "decided", hidden: true }, decidedText, change);
  const body = h("div", { class: "card-body" });
  const node = h("section", { class: `card ${kind}`, role: "group", "aria-labelledby": titleId }, heading, expiry, body, decided);
  return { node, heading, expiry, decided, decidedText, change, body };
}

function approvalCard(interrupt, messages, decide) {
  const call = findCall(messages, interrupt.toolCallId);
  const name = call ? call.function.name : "a tool";
  const args = call ? call.function.arguments : "";
  const s = shell("approval", interrupt.message || `Approve ${name}?`);
  const editSchema = interrupt.responseSchema && interrupt.responseSchema.properties
    ? interrupt.responseSchema.properties.editedArgs
    : undefined;

  const approve = h("button", { type: "button", class: "primary", text: "Approve", "aria-label": `Approve ${name}` });
  const edit = editSchema
    ? h("button", { type: "button", class: "secondary", text: "Edit arguments", "aria-expanded": "false" })
    : null;
  const reasonId = uid("reason");
  const reason = h("input", { id: reasonId, type: "text", name: "reason", autocomplete: "off" });
  const reject = h("button", { type: "button", class: "danger", text: "Reject", "aria-label": `Reject ${name}` });
  const editor = h("div", { class: "editor", hidden: true });
  let form = null;

  s.body.append(
    h("p", { class: "tool-line" }, "Tool ", h("code", { text: name })),
    h("p", { class: "label", text: "Arguments" }),
    h("pre", { class: "args", text: prettyJson(args) }),
    h("div", { class: "actions" }, approve, edit),
    editor,
    h(
      "div",
      { class: "reject-row" },
      h("label", { for: reasonId, text: "Reason for rejecting (optional)" }),
      h("div", { class: "inline" }, reason, reject),
    ),
  );

  approve.addEventListener("click", () => decide({ status: "resolved", payload: { approved: true } }, "Approved."));
  reject.addEventListener("click", () => {
    // The person's words as typed (DESIGN §3 rule 7); only spaces is no reason.
    const why = reason.value.trim() ? reason.value : "";
    if (isExpired(interrupt)) decide({ status: "cancelled" }, "Rejected (the request had expired).");
    else decide({ status: "resolved", payload: why ? { approved: false, reason: why } : { approved: false } }, why ? `Rejected: ${why}` : "Rejected.");
  });
  if (edit) {
    edit.addEventListener("click", () => {
      const opening = editor.hidden;
      if (opening) {
        form = schemaForm(editSchema, parseArgs(args), { label: "Arguments (JSON)" });
        const send = h("button", { type: "submit", class: "primary", text: "Approve with these arguments" });
        const cancel = h("button", { type: "button", class: "secondary", text: "Cancel editing" });
        const f = h("form", { novalidate: true, "aria-label": `Edit the arguments of ${name}` }, form.el, h("div", { class: "actions" }, send, cancel));
        f.addEventListener("submit", (event) => {
          event.preventDefault();
          const r = form.read();
          if (r.ok) decide({ status: "resolved", payload: { approved: true, editedArgs: r.value } }, "Approved with edited arguments.");
        });
        cancel.addEventListener("click", () => {
          editor.hidden = true;
          edit.setAttribute("aria-expanded", "false");
          edit.focus();
        });
        editor.replaceChildren(f);
      }
      editor.hidden = !opening;
      edit.setAttribute("aria-expanded", String(opening));
      if (opening) form.focus();
    });
  }
  return {
    ...s,
    controls: [approve, edit, reason, reject].filter(Boolean),
    expire() {
      approve.disabled = true;
      if (edit) edit.disabled = true;
      editor.hidden = true;
    },
  };
}

function questionCard(interrupt, messages, decide) {
  const marker = (interrupt.metadata && interrupt.metadata.agui_chat) || {};
  const call = marker.toolCallId ? findCall(messages, marker.toolCallId) : null;
  const s = shell("question", interrupt.message || "The agent has a question.");
  const schema = interrupt.responseSchema;
  const form = schema
    ? schemaForm(schema, undefined, { label: "Your answer (JSON)" })
    : schemaForm({ type: "object", properties: { answer: { type: "string", title: "Your answer" } }, required: ["answer"] }, {}, {});
  const send = h("button", { type: "submit", class: "primary", text: "Send answer" });
  const cancel = h("button", { type: "button", class: "secondary", text: "Cancel", "aria-label": "Cancel: do not answer" });
  const f = h("form", { novalidate: true, "aria-label": "Answer the question" }, form.el, h("div", { class: "actions" }, send, cancel));
  if (call) s.body.append(h("p", { class: "tool-line" }, "Asked by the tool ", h("code", { text: call.function.name })));
  s.body.append(f);
  f.addEventListener("submit", (event) => {
    event.preventDefault();
    if (isExpired(interrupt)) return;
    const r = form.read();
    if (!r.ok) return;
    const payload = schema ? r.value : r.value.answer;
    decide({ status: "resolved", payload }, "Answered.");
  });
  cancel.addEventListener("click", () => decide({ status: "cancelled" }, "Cancelled: not answered."));
  return {
    ...s,
    controls: [...f.querySelectorAll("input, select, textarea, button")],
    expire() {
      send.disabled = true;
    },
  };
}

/**
 * The view of one pause. `onDecided(entries)` is called once, when every card is decided,
 * with the resume entries in the order of the interrupts.
 */
export function pauseView(interrupts, messages, onDecided) {
  const decisions = new Map();
  const status = h("p", { class: "pause-status", role: "status" });
  const el = h(
    "section",
    { class: "pause", "aria-label": "Waiting for your decision" },
    h("p", { class: "pause-intro", text: interrupts.length > 1 ? `The agent is waiting for ${interrupts.length} decisions; they are sent together once all are made.` : "The agent is waiting for you." }),
  );
  let sent = false;
  const cards = interrupts.map((interrupt) => {
    let card;
    const decide = (entry, summary) => {
      if (sent || decisions.has(interrupt.id)) return;
      decisions.set(interrupt.id, { interruptId: interrupt.id, ...entry });
      card.body.hidden = true;
      card.decided.hidden = false;
      card.decidedText.textContent = summary;
      card.change.hidden = interrupts.length === 1;
      update();
    };
    card = isApproval(interrupt) ? approvalCard(interrupt, messages, decide) : questionCard(interrupt, messages, decide);
    card.interrupt = interrupt;
    card.change.addEventListener("click", () => {
      if (sent) return;
      decisions.delete(interrupt.id);
      card.body.hidden = false;
      card.decided.hidden = true;
      update();
      card.heading.focus();
    });
    el.append(card.node);
    return card;
  });
  el.append(status);

  function update() {
    const left = interrupts.length - decisions.size;
    if (left > 0) {
      status.textContent = decisions.size ? `Decided ${decisions.size} of ${interrupts.length}; waiting for ${left} more.` : "";
      return;
    }
    sent = true;
    for (const card of cards) card.change.hidden = true;
    status.textContent = "Sending your answers…";
    onDecided(interrupts.map((i) => decisions.get(i.id)));
  }

  function tick(now = Date.now()) {
    for (const card of cards) {
      const text = countdown(card.interrupt, now);
      card.expiry.textContent = text;
      card.expiry.hidden = text === "";
      if (isExpired(card.interrupt, now) && !card.expired) {
        card.expired = true;
        card.expire();
      }
    }
  }
  tick();
  return {
    el,
    tick,
    focus: () => cards[0] && cards[0].heading.focus(),
    get sent() {
      return sent;
    },
  };
}
