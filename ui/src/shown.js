// What the page shows of calls, questions and results is the server's display (the consent
// engine's, DESIGN §3 rule 8): metadata.agui_chat.shown on its interrupts, and
// POST <endpoint>?agui_chat=display for everything else. The page only puts that text in
// text nodes; it never renders a call's raw arguments itself.

import { h } from "./dom.js";
import { restoreExact } from "./exact.js";

/** The display the server attached to an interrupt, or null. */
export function shownOf(interrupt) {
  const ours = interrupt && interrupt.metadata && interrupt.metadata.agui_chat;
  return ours && ours.shown && typeof ours.shown === "object" ? ours.shown : null;
}

function isShown(value) {
  return value && typeof value.text === "string" && typeof value.full === "string";
}

/**
 * Ask the server how to show `calls` (`[{name, arguments, before?}]`, arguments as JSON
 * text) and `texts`. Resolves to `{calls: [{call, changes?}], texts: [shown]}`.
 */
export async function askDisplay(endpoint, calls, texts = []) {
  const response = await fetch(`${endpoint}?agui_chat=display`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: restoreExact(JSON.stringify({ calls, texts })),
    cache: "no-store",
  });
  if (!response.ok) throw new Error(`the server could not show it (HTTP ${response.status})`);
  const data = await response.json();
  if (!data || !Array.isArray(data.calls) || !Array.isArray(data.texts) || !data.calls.every((c) => isShown(c.call)) || !data.texts.every(isShown))
    throw new Error("the server's display could not be read");
  return data;
}

/** A shown value: its text in a `tag`, and when it was cut, a button showing the whole. */
export function shownNode(tag, shown, attrs = {}) {
  const text = h(tag, { ...attrs, text: shown.text });
  if (!shown.omitted) return text;
  const label = `Show all (${shown.omitted} more characters)`;
  const more = h("button", { type: "button", class: "secondary show-all", text: label, "aria-expanded": "false" });
  more.addEventListener("click", () => {
    const whole = more.getAttribute("aria-expanded") !== "true";
    text.textContent = whole ? shown.full : shown.text;
    more.setAttribute("aria-expanded", String(whole));
    more.textContent = whole ? "Show less" : label;
  });
  return h("div", { class: "shown" }, text, more);
}
