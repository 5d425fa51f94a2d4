// What the page shows of calls, questions and results is the server's display (the consent
// engine's, DESIGN §3 rule 8): metadata.agui_chat.shown on its interrupts, and
// POST <endpoint>?agui_chat=display for everything else. The page only puts that text in
// text nodes; it never renders a call's raw arguments itself.
// What streams in (the model's text and reasoning) and what the page words itself around
// outside text (an error's message, a schema's labels) cannot wait for the server: for those
// `visible` and `shownText` are the display function's twins in the page (agui_chat/_display.py,
// same characters, same escapes, same cut; tests/agui/server/test_ui_streamed_text_escaped.py
// holds them to the Python ones).

import { h } from "./dom.js";
import { restoreExact } from "./exact.js";

// Python's unicodedata categories Cc, Cf, Cs, Co, Cn, Zl, Zp: control, format (bidi
// overrides, zero-width), lone surrogates, private use, unassigned, line/paragraph separators;
// and every code point Unicode says a renderer draws as nothing (Default_Ignorable_Code_Point:
// variation selectors, the combining grapheme joiner, Hangul fillers, tags), several of which
// are marks or letters no category above catches.
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu;

/** The display's limit: characters at most shown before a value is cut (`DISPLAY_LIMIT`). */
export const DISPLAY_LIMIT = 2000;

function escapeChar(char) {
  const code = char.codePointAt(0);
  const hex = code.toString(16);
  if (code <= 0xff) return `\\x${hex.padStart(2, "0")}`;
  if (code <= 0xffff) return `\\u${hex.padStart(4, "0")}`;
  return `\\U${hex.padStart(8, "0")}`;
}

/**
 * `text` with every hidden character as a visible escape (`\x1b`, `\u202e`); with
 * `multiline` a newline and a tab stay as they are, for prose such as the model's answer.
 */
export function visible(text, { multiline = false } = {}) {
  return String(text).replace(HIDDEN, (char) => (multiline && (char === "\n" || char === "\t") ? char : escapeChar(char)));
}

/** A display of `text` made in the page: `{text, full, omitted}` as the server's (shown_text). */
export function shownText(text, { multiline = true, limit = DISPLAY_LIMIT } = {}) {
  const full = visible(text, { multiline });
  const chars = Array.from(full);
  if (chars.length <= limit) return { text: full, full, omitted: 0 };
  const omitted = chars.length - limit;
  return { text: `${chars.slice(0, limit).join("")}… [${omitted} more characters]`, full, omitted };
}

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
