// The cards of a pause: one approval card per gated call, one question card per
// request_input. A card records a decision; the pause's answers go out together, only once
// every card is decided (AG-UI requires a resume to cover every interrupt), and only once.
// Every call and question is shown in the server's words (shown.js), never from raw
// arguments; an edit is shown as the new call, with what changed, and confirmed first.

import { h, uid } from "./dom.js";
import { parseExact, stringifyExact } from "./exact.js";
import { rememberOffer } from "./grants.js";
import { schemaForm } from "./schemaform.js";
import { askDisplay, shownNode, shownOf } from "./shown.js";

/** An approval is keyed on toolCallId, whatever the reason says (agui-wire §5.4). */
export function isApproval(interrupt) {
  return typeof interrupt.toolCallId === "string" || interrupt.reason === "tool_approval";
}

export function isExpired(interrupt, now = Date.now()) {
  if (!interrupt.expiresAt) return false;
  const at = Date.parse(interrupt.expiresAt);
  return !Number.isNaN(at) && at <= now;
}

/** The expiry line, worded the same on every card. */
export function countdown(interrupt, now) {
  if (!interrupt.expiresAt) return "";
  const at = Date.parse(interrupt.expiresAt);
  if (Number.isNaN(at)) return "";
  if (isExpired(interrupt, now)) return "Expired: this can no longer be approved or answered, only turned down.";
  const left = Math.max(1, Math.ceil((at - now) / 1000));
  const hours = Math.floor(left / 3600);
  const minutes = Math.floor((left % 3600) / 60);
  const seconds = left % 60;
  const parts = hours ? `${hours} h ${minutes} min` : minutes ? `${minutes} min ${seconds} s` : `${seconds} s`;
  return `Expires in ${parts} (at ${new Date(at).toLocaleTimeString()}).`;
}

function findCall(messages, callId) {
  for (const m of messages) for (const c of m.toolCalls || []) if (c.id === callId) return c;
  return null;
}

function parseArgs(text) {
  try {
    const value = parseExact(text || "{}");
    return value && typeof value === "object" && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

/** The shell every card shares: a labelled group, its heading, expiry line, decided line. */
function shell(kind, title) {
  const titleId = uid("card-title");
  const heading = h("h2", { id: titleId, tabindex: "-1" }, shownNode("span", title));
  const expiry = h("p", { class: "expiry", hidden: true });
  const decidedText = h("p", { class: "decided-text", role: "status" });
  const change = h("button", { type: "button", class: "secondary", text: "Change" });
  const decided = h("div", { class: "decided", hidden: true }, decidedText, change);
  const body = h("div", { class: "card-body" });
  const node = h("section", { class: `card ${kind}`, role: "group", "aria-labelledby": titleId }, heading, expiry, body, decided);
  return { node, heading, expiry, decided, decidedText, change, body };
}

const UNSHOWN = { text: "(this request cannot be shown)", full: "(this request cannot be shown)", omitted: 0 };

function approvalCard(interrupt, messages, decide, endpoint) {
  const call = findCall(messages, interrupt.toolCallId);
  const shown = shownOf(interrupt);
  // Without the server's display (or the call) nothing can be approved: only rejected.
  const showable = Boolean(shown && shown.call && shown.tool && call);
  const name = showable ? shown.tool.full : "a tool";
  const args = call ? call.function.arguments : "";
  const s = shell("approval", showable ? shown.title : UNSHOWN);
  const editSchema = interrupt.responseSchema && interrupt.responseSchema.properties
    ? interrupt.responseSchema.properties.editedArgs
    : undefined;

  const approve = h("button", { type: "button", class: "primary", text: "Approve", "aria-label": `Approve ${name}`, disabled: !showable });
  const reasonId = uid("reason");
  const reason = h("input", { id: reasonId, type: "text", name: "reason", autocomplete: "off" });
  const reject = h("button", { type: "button", class: "danger", text: "Reject", "aria-label": `Reject ${name}` });
  const edit = editSchema && showable
    ? h("button", { type: "button", class: "secondary", text: "Edit arguments", "aria-expanded": "false" })
    : null;
  const actions = h("div", { class: "actions" }, approve, reject, edit);
  const editor = h("div", { class: "editor", hidden: true });
  const review = h("div", { class: "review", hidden: true, role: "region", "aria-label": "The edited call" });
  // Only where the interrupt offers it, and only as the server's schema allows (grants.js).
  const offer = showable ? rememberOffer(interrupt) : null;
  const remember = offer ? rememberPart(offer, shown.call, decide) : null;

  s.body.append(
    h("p", { class: "label", text: "This runs:" }),
    shownNode("pre", showable ? shown.call : UNSHOWN, { class: "call" }),
    h("div", { class: "reject-reason" }, h("label", { for: reasonId, text: "Reason for rejecting (optional)" }), reason),
    ...[actions, remember && remember.node, editor, review].filter(Boolean),
  );

  approve.addEventListener("click", () => decide({ status: "resolved", payload: { approved: true } }, { kind: "approved", text: "Approved." }));
  reject.addEventListener("click", () => {
    // The person's words as typed (DESIGN §3 rule 7); only spaces is no reason.
    const why = reason.value.trim() ? reason.value : "";
    if (isExpired(interrupt)) decide({ status: "cancelled" }, { kind: "expired", text: "Expired, so turned down: it will not run." });
    else
      decide(
        { status: "resolved", payload: why ? { approved: false, reason: why } : { approved: false } },
        { kind: "rejected", reason: why, text: why ? `Rejected: ${why}` : "Rejected (no reason given)." },
      );
  });
  let expired = false;
  if (edit) {
    let form = null;
    const closeAll = () => {
      editor.hidden = true;
      review.hidden = true;
      edit.setAttribute("aria-expanded", "false");
      approve.disabled = expired;
      if (remember) remember.disable(expired);
    };
    edit.addEventListener("click", () => {
      if (!editor.hidden || !review.hidden) {
        closeAll();
        return;
      }
      form = schemaForm(editSchema, parseArgs(args), { label: "Arguments (JSON)" });
      const next = h("button", { type: "submit", class: "primary", text: "Review the edited call" });
      const cancel = h("button", { type: "button", class: "secondary", text: "Cancel editing" });
      const problem = h("p", { class: "field-error", role: "alert", hidden: true });
      const f = h("form", { novalidate: true, "aria-label": `Edit the arguments of ${name}` }, form.el, problem, h("div", { class: "actions" }, next, cancel));
      f.addEventListener("submit", async (event) => {
        event.preventDefault();
        const r = form.read();
        if (!r.ok) return;
        next.disabled = true;
        let shownEdit;
        try {
          const got = await askDisplay(endpoint, [{ name: call.function.name, arguments: stringifyExact(r.value), before: args || "{}" }]);
          shownEdit = got.calls[0];
        } catch (error) {
          problem.textContent = `The edited call could not be shown, so it cannot be approved yet (${error.message}). Try again.`;
          problem.hidden = false;
          return;
        } finally {
          next.disabled = false;
        }
        problem.hidden = true;
        showReview(r.value, shownEdit);
      });
      cancel.addEventListener("click", () => {
        closeAll();
        edit.focus();
      });
      editor.replaceChildren(f);
      editor.hidden = false;
      review.hidden = true;
      approve.disabled = true; // one call to approve at a time: the edited one, once reviewed
      if (remember) remember.disable(true); // an edited call is approved once, never remembered
      edit.setAttribute("aria-expanded", "true");
      form.focus();
    });
    function showReview(edited, shownEdit) {
      const changes = shownEdit.changes || [];
      const confirm = h("button", { type: "button", class: "primary", text: "Approve the edited call" });
      const back = h("button", { type: "button", class: "secondary", text: "Back to editing" });
      review.replaceChildren(
        h("p", { class: "label", text: "Instead, this runs:" }),
        shownNode("pre", shownEdit.call, { class: "call edited" }),
        h("p", { class: "label", text: changes.length ? "What changed:" : "Nothing changed." }),
        changes.length
          ? h(
              "ul",
              { class: "changes" },
              changes.map((c) =>
                h("li", {}, c.before ? shownNode("code", c.before) : "(not given)", " → ", c.after ? shownNode("code", c.after) : "(removed)"),
              ),
            )
          : null,
        h("div", { class: "actions" }, confirm, back),
      );
      confirm.addEventListener("click", () =>
        decide({ status: "resolved", payload: { approved: true, editedArgs: edited } }, { kind: "edited", text: `Approved with your edit: ${shownEdit.call.text}` }),
      );
      back.addEventListener("click", () => {
        review.hidden = true;
        editor.hidden = false;
        form.focus();
      });
      editor.hidden = true;
      review.hidden = false;
      confirm.focus();
    }
  }
  return {
    ...s,
    actions,
    controls: [approve, reject, edit, reason, ...(remember ? remember.controls : [])].filter(Boolean),
    expire() {
      expired = true;
      approve.disabled = true;
      if (remember) remember.disable(true);
      if (edit) edit.disabled = true;
      editor.hidden = true;
      review.hidden = true;
    },
  };
}

/**
 * "Approve and don't ask again in this conversation for [duration]": the durations `offer`
 * allows, and what it covers said in full: this call as shown (the same tool with the same
 * arguments), in this conversation, for the chosen time.
 */
function rememberPart(offer, call, decide) {
  const selectId = uid("remember-for");
  const coversId = uid("remember-covers");
  const legendId = uid("remember-legend");
  const select = h(
    "select",
    { id: selectId, name: "remember-for", "aria-describedby": coversId },
    offer.choices.map((c, i) => h("option", { value: String(i), text: c.label, selected: i === 0 })),
  );
  const button = h("button", { type: "button", class: "secondary remember-approve", "aria-describedby": coversId });
  const howLong = h("strong", { class: "remember-how-long" });
  const covers = h(
    "div",
    { id: coversId, class: "hint remember-covers" },
    "It covers only this same call, with exactly these arguments: ",
    shownNode("code", call, { class: "remember-call" }),
    "; only in this conversation; for ",
    howLong,
    " from when it is approved. Any other call still asks. You can revoke it under Remembered approvals.",
  );
  const chosen = () => offer.choices[Number(select.value)] || offer.choices[0];
  const update = () => {
    const { label } = chosen();
    button.textContent = `Approve and don't ask again in this conversation for ${label}`;
    howLong.textContent = label;
  };
  select.addEventListener("change", update);
  update();
  button.addEventListener("click", () => {
    const { seconds, label } = chosen();
    decide(
      { status: "resolved", payload: { approved: true, remember: { scope: "thread", seconds } } },
      { kind: "approved", text: `Approved, and not asked again in this conversation for ${label} for this same call.` },
    );
  });
  const node = h(
    "fieldset",
    { class: "remember", "aria-labelledby": legendId },
    h("legend", { id: legendId, text: "Or approve and don't ask again in this conversation" }),
    h("div", { class: "inline" }, h("label", { for: selectId, text: "Don't ask again for" }), select, button),
    covers,
  );
  return {
    node,
    controls: [select, button],
    disable(off) {
      select.disabled = off;
      button.disabled = off;
    },
  };
}

function questionCard(interrupt, messages, decide) {
  const shown = shownOf(interrupt);
  const s = shell("question", shown && shown.title ? shown.title : { text: "The agent has a question.", full: "The agent has a question.", omitted: 0 });
  const schema = interrupt.responseSchema;
  const form = schema
    ? schemaForm(schema, undefined, { label: "Your answer (JSON)" })
    : schemaForm({ type: "object", properties: { answer: { type: "string", title: "Your answer" } }, required: ["answer"] }, {}, {});
  const send = h("button", { type: "submit", class: "primary", text: "Send answer" });
  const cancel = h("button", { type: "button", class: "secondary", text: "Cancel", "aria-label": "Cancel: do not answer" });
  const actions = h("div", { class: "actions" }, send, cancel);
  const f = h("form", { novalidate: true, "aria-label": "Answer the question" }, form.el, actions);
  if (shown && shown.tool) s.body.append(h("p", { class: "tool-line" }, "Asked by the tool ", shownNode("code", shown.tool)));
  s.body.append(f);
  f.addEventListener("submit", (event) => {
    event.preventDefault();
    if (isExpired(interrupt)) return;
    const r = form.read();
    if (!r.ok) return;
    const payload = schema ? r.value : r.value.answer;
    decide({ status: "resolved", payload }, { kind: "answered", text: "Answered." });
  });
  cancel.addEventListener("click", () => decide({ status: "cancelled" }, { kind: "cancelled", text: "Cancelled: not answered." }));
  return {
    ...s,
    actions,
    controls: [...f.querySelectorAll("input, select, textarea, button")],
    expire() {
      send.disabled = true;
    },
  };
}

/**
 * The view of one pause. `onDecided(entries, outcomes)` is called once, when every card is
 * decided, with the resume entries in the order of the interrupts and, by tool call id, what
 * the person decided for each approval (`{kind, reason?}`).
 */
export function pauseView(interrupts, messages, onDecided, endpoint) {
  const decisions = new Map();
  const outcomes = {};
  const status = h("p", { class: "pause-status", role: "status" });
  const el = h(
    "section",
    { class: "pause", "aria-label": "Waiting for your decision" },
    h("p", { class: "pause-intro", text: interrupts.length > 1 ? `The agent is waiting for ${interrupts.length} decisions; they are sent together once all are made.` : "The agent is waiting for you." }),
  );
  let sent = false;
  const cards = interrupts.map((interrupt) => {
    let card;
    const decide = (entry, outcome) => {
      if (sent || decisions.has(interrupt.id)) return;
      decisions.set(interrupt.id, { interruptId: interrupt.id, ...entry });
      if (isApproval(interrupt)) outcomes[interrupt.toolCallId] = { kind: outcome.kind, reason: outcome.reason };
      card.body.hidden = true;
      card.decided.hidden = false;
      card.decidedText.textContent = outcome.text;
      card.change.hidden = interrupts.length === 1;
      update();
    };
    card = isApproval(interrupt) ? approvalCard(interrupt, messages, decide, endpoint) : questionCard(interrupt, messages, decide);
    card.interrupt = interrupt;
    card.change.addEventListener("click", () => {
      if (sent) return;
      decisions.delete(interrupt.id);
      if (isApproval(interrupt)) delete outcomes[interrupt.toolCallId];
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
    onDecided(interrupts.map((i) => decisions.get(i.id)), outcomes);
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
    focus() {
      if (!cards[0]) return;
      cards[0].heading.focus({ preventScroll: true });
      // The buttons, not only the heading, above the composer that sticks to the bottom.
      const footer = document.querySelector("footer");
      cards[0].actions.style.scrollMarginBottom = `${(footer ? footer.offsetHeight : 0) + 16}px`;
      cards[0].node.style.scrollMarginTop = "16px";
      cards[0].actions.scrollIntoView({ block: "end" });
      if (cards[0].node.getBoundingClientRect().top < 0 && cards[0].node.offsetHeight < window.innerHeight * 0.7) cards[0].node.scrollIntoView({ block: "start" });
    },
    get sent() {
      return sent;
    },
  };
}
