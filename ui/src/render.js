// The conversation: messages as they stream, reasoning collapsed, tool calls as cards that
// say what happened to each call (waiting, ran, rejected, expired, cancelled, failed).
// A call and its result are shown in the server's words (`view.shown`, from shown.js), never
// from the raw arguments; a call waiting for approval is shown once, on its approval card.
// Nodes are keyed by message and call id and updated in place, so streaming text grows
// where it is and an opened <details> stays open. What streams in (text, reasoning) is shown
// through the display function's twin (`visible`): hidden characters as escapes, in a text node.

import { h } from "./dom.js";
import { shownNode, visible } from "./shown.js";

function contentText(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (part && part.type === "text" ? part.text : `[${(part && part.type) || "part"}]`))
    .join("\n");
}

/** The text of a tool message, as it is sent for display. */
export function resultText(toolMessage) {
  const error = toolMessage.error;
  return error ? `${error}\n${contentText(toolMessage.content)}`.trim() : contentText(toolMessage.content);
}

/** What a message says, as shown: its text with every hidden character escaped, whole. */
function said(message) {
  return visible(contentText(message.content), { multiline: true });
}

function messageNode(message) {
  const role = message.role;
  if (role === "reasoning") {
    const body = h("p", { class: "text" });
    const node = h(
      "details",
      { class: "msg reasoning" },
      h("summary", { text: "Reasoning" }),
      body,
    );
    return { node, update: (m) => (body.textContent = said(m)) };
  }
  const who = role === "user" ? "You" : role === "assistant" ? "Agent" : visible(role);
  const text = h("p", { class: "text" });
  const calls = h("div", { class: "calls" });
  const node = h(
    "article",
    { class: `msg ${role}`, "aria-label": `${who} said` },
    h("p", { class: "who", text: who }),
    text,
    calls,
  );
  const cards = new Map();
  return {
    node,
    update(m, results, view) {
      const words = said(m);
      text.textContent = words;
      text.hidden = words === "";
      const seen = new Set();
      for (const call of m.toolCalls || []) {
        seen.add(call.id);
        let card = cards.get(call.id);
        if (!card) {
          card = toolCard();
          cards.set(call.id, card);
          calls.append(card.node);
        }
        card.update(call, results.get(call.id), view);
      }
      for (const [id, card] of cards) {
        if (!seen.has(id)) {
          card.node.remove();
          cards.delete(id);
        }
      }
      calls.hidden = cards.size === 0;
    },
  };
}

/** What happened to a call, in words, and a class for its state. */
function callState(call, toolMessage, view) {
  const waiting = view.waiting.get(call.id);
  if (waiting) return ["waiting", waiting];
  const outcome = view.outcomes[call.id];
  if (outcome && outcome.kind === "rejected")
    return ["rejected", outcome.reason ? `Rejected: ${outcome.reason} — it did not run.` : "Rejected (no reason given) — it did not run."];
  if (outcome && outcome.kind === "expired") return ["expired", "Expired before it was approved — it did not run."];
  if (toolMessage) {
    // The tool loop answers a failed call with an "Error: ..." result (MEAI's wording).
    if (toolMessage.error || resultText(toolMessage).startsWith("Error: ")) return ["failed", "Failed: the tool reported an error (its result says which)."];
    return ["ran", outcome && outcome.kind === "edited" ? "Ran with your edited arguments." : "Ran."];
  }
  if (outcome && outcome.kind === "cancelled")
    return [
      "cancelled",
      outcome.by === "you"
        ? "Cancelled: you stopped the run before its result came back."
        : "Cancelled: the run was cancelled before its result came back.",
    ];
  if (view.running) return ["running", "Running…"];
  return ["cancelled", "Cancelled: the run stopped before it ran."];
}

function toolCard() {
  const title = h("h3", { class: "tool-name", text: "Tool call" });
  const status = h("p", { class: "tool-status" });
  const callBlock = h("div", { class: "call-block" });
  const resultBlock = h("div", { class: "result-block", hidden: true });
  const node = h("section", { class: "tool", "aria-label": "Tool call" }, title, status, callBlock, resultBlock);
  let shownCall = null;
  let shownResult = null;
  return {
    node,
    update(call, toolMessage, view) {
      node.dataset.callId = call.id;
      const [state, words] = callState(call, toolMessage, view);
      node.dataset.state = state;
      status.textContent = words;
      const display = view.shown.calls[call.id];
      // A call waiting for approval is shown on its card below, once.
      callBlock.hidden = state === "waiting";
      if (display !== shownCall) {
        shownCall = display;
        // The card names its tool (as shown: escaped, cut if long) while it waits, too.
        title.textContent = display && display.tool ? `Tool call: ${display.tool.text}` : "Tool call";
        node.setAttribute("aria-label", display ? `Tool call ${display.tool ? display.tool.full : ""}`.trim() : "Tool call");
        callBlock.replaceChildren(display ? shownNode("pre", display.call, { class: "args" }) : h("p", { class: "label", text: "(the call is being prepared for display)" }));
      }
      const result = toolMessage ? view.shown.results[call.id] : null;
      resultBlock.hidden = !toolMessage;
      if (toolMessage && result !== shownResult) {
        shownResult = result;
        resultBlock.replaceChildren(
          h("p", { class: "label", text: state === "ran" || state === "failed" ? "Result" : "What the model was told" }),
          result ? shownNode("pre", result, { class: "result" }) : h("p", { class: "label", text: "(the result is being prepared for display)" }),
        );
      }
    },
  };
}

/**
 * Renders `messages` into `container`, reusing nodes. `view`: `waiting` (call id → status),
 * `outcomes` (call id → the person's decision), `shown` (`{calls: {id: {call, tool}}, results: {id: shown}}`),
 * `running`.
 */
export function createConversation(container) {
  const nodes = new Map();
  return function render(messages, view) {
    const results = new Map();
    for (const m of messages) if (m.role === "tool") results.set(m.toolCallId, m);
    const wanted = [];
    for (const m of messages) {
      if (m.role === "tool" || m.role === "activity" || m.role === "system" || m.role === "developer") continue;
      let entry = nodes.get(m.id);
      if (!entry || entry.role !== m.role) {
        entry = { ...messageNode(m), role: m.role };
        nodes.set(m.id, entry);
      }
      entry.update(m, results, view);
      wanted.push(entry.node);
    }
    const keep = new Set(wanted);
    for (const [id, entry] of nodes) {
      if (!keep.has(entry.node)) {
        entry.node.remove();
        nodes.delete(id);
      }
    }
    wanted.forEach((node, i) => {
      if (container.children[i] !== node) container.insertBefore(node, container.children[i] || null);
    });
  };
}
