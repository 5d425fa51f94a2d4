// The conversation: messages as they stream, reasoning collapsed, tool calls as cards with
// their arguments and results. Nodes are keyed by message and call id and updated in
// place, so streaming text grows where it is and an opened <details> stays open.

import { h, prettyJson } from "./dom.js";

function contentText(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (part && part.type === "text" ? part.text : `[${(part && part.type) || "part"}]`))
    .join("\n");
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
    return { node, update: (m) => (body.textContent = contentText(m.content)) };
  }
  const who = role === "user" ? "You" : role === "assistant" ? "Agent" : role;
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
    update(m, results, waiting) {
      const said = contentText(m.content);
      text.textContent = said;
      text.hidden = said === "";
      const seen = new Set();
      for (const call of m.toolCalls || []) {
        seen.add(call.id);
        let card = cards.get(call.id);
        if (!card) {
          card = toolCard();
          cards.set(call.id, card);
          calls.append(card.node);
        }
        card.update(call, results.get(call.id), waiting.get(call.id));
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

function toolCard() {
  const name = h("h3", { class: "tool-name" });
  const status = h("p", { class: "tool-status" });
  const args = h("pre", { class: "args" });
  const result = h("pre", { class: "result" });
  const resultBlock = h("div", { class: "result-block", hidden: true }, h("p", { class: "label", text: "Result" }), result);
  const node = h(
    "section",
    { class: "tool" },
    name,
    status,
    h("p", { class: "label", text: "Arguments" }),
    args,
    resultBlock,
  );
  return {
    node,
    update(call, toolMessage, waiting) {
      name.textContent = call.function.name;
      node.setAttribute("aria-label", `Tool call ${call.function.name}`);
      node.dataset.callId = call.id;
      args.textContent = prettyJson(call.function.arguments || "");
      if (toolMessage) {
        const error = toolMessage.error;
        result.textContent = error ? `${error}\n${contentText(toolMessage.content)}`.trim() : contentText(toolMessage.content);
        resultBlock.hidden = false;
        status.textContent = error ? "Failed" : "Done";
      } else {
        resultBlock.hidden = true;
        status.textContent = waiting || "Waiting for a result";
      }
    },
  };
}

/** Renders `messages` into `container`, reusing nodes. `waiting` maps call ids to a status. */
export function createConversation(container) {
  const nodes = new Map();
  return function render(messages, waiting = new Map()) {
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
      entry.update(m, results, waiting);
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
