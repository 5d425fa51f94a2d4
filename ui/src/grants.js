// Remembered approvals (grants). An approval card offers "approve and don't ask again in this
// conversation" only where its interrupt's responseSchema offers `remember` (the tool was
// wrapped approval_required(allow_remember=True)) and only for durations up to that schema's
// maximum; anything the page cannot read there offers nothing (fails closed). The panel lists
// the conversation's grants through POST <endpoint>?agui_chat=grants, each as the server's
// display shows its call (text nodes only, as on the cards), and revokes them one by one.

import { fill, h } from "./dom.js";
import { RUN_ERROR_WORDS } from "./errors.js";
import { restoreExact } from "./exact.js";
import { shownNode, shownText, visible } from "./shown.js";

/** The durations offered, shortest first; only those within the server's cap are shown. */
const DURATIONS = [
  [600, "10 minutes"],
  [3600, "1 hour"],
  [8 * 3600, "8 hours"],
  [24 * 3600, "1 day"],
];

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** A duration in words: `10 minutes`, `1 hour 30 minutes`, `45 seconds` (two units at most). */
export function durationWords(seconds) {
  const whole = Math.floor(seconds);
  if (whole < 1) return `${seconds} seconds`;
  const units = [
    [86400, "day"],
    [3600, "hour"],
    [60, "minute"],
    [1, "second"],
  ];
  const parts = [];
  let left = whole;
  for (const [size, word] of units) {
    const n = Math.floor(left / size);
    left -= n * size;
    if (n && parts.length < 2) parts.push(plural(n, word));
    else if (parts.length) break;
  }
  return parts.join(" ");
}

/**
 * What an approval interrupt lets the person remember: `{choices: [{seconds, label}]}`, or
 * null when its responseSchema offers no `remember`, or offers one the page cannot read (no
 * thread scope, no positive finite maximum): then only a plain approval is offered.
 */
export function rememberOffer(interrupt) {
  const schema = interrupt && interrupt.responseSchema;
  const properties = isObject(schema) && isObject(schema.properties) ? schema.properties : null;
  if (!properties || !Object.hasOwn(properties, "remember")) return null;
  const remember = properties.remember;
  if (!isObject(remember) || remember.type !== "object" || !isObject(remember.properties)) return null;
  const { scope, seconds } = remember.properties;
  if (!isObject(scope) || !Array.isArray(scope.enum) || !scope.enum.includes("thread")) return null;
  if (!isObject(seconds) || seconds.type !== "number") return null;
  const max = seconds.maximum;
  if (typeof max !== "number" || !Number.isFinite(max) || max <= 0) return null;
  const fit = DURATIONS.filter(([s]) => s <= max).map(([s, label]) => ({ seconds: s, label }));
  return { choices: fit.length ? fit : [{ seconds: max, label: durationWords(max) }] };
}

/** A remembered approval's time left, worded like the cards' expiry line. */
export function timeLeft(expires, now = Date.now()) {
  const at = Date.parse(expires);
  if (Number.isNaN(at)) return "Expiry unknown.";
  if (at <= now) return "Expired: this call asks again.";
  const left = Math.max(1, Math.ceil((at - now) / 1000));
  const hours = Math.floor(left / 3600);
  const minutes = Math.floor((left % 3600) / 60);
  const secs = left % 60;
  const parts = hours ? `${hours} h ${minutes} min` : minutes ? `${minutes} min ${secs} s` : `${secs} s`;
  return `Expires in ${parts} (at ${new Date(at).toLocaleTimeString()}).`;
}

/** A failure of the grants endpoint, with the server's code when it sent one. */
export class GrantsError extends Error {
  constructor(message, code = "") {
    super(message);
    this.name = "GrantsError";
    this.code = code;
  }
}

async function askGrants(endpoint, body) {
  let response;
  try {
    response = await fetch(`${endpoint}?agui_chat=grants`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: restoreExact(JSON.stringify(body)),
      cache: "no-store",
    });
  } catch {
    throw new GrantsError("the server cannot be reached");
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) {
    const code = data && typeof data.code === "string" ? data.code : "";
    const message = data && typeof data.message === "string" ? data.message : "";
    throw new GrantsError(message || `the server refused it (HTTP ${response.status})`, code);
  }
  if (!isObject(data)) throw new GrantsError("the server's answer could not be read");
  return data;
}

function isShown(value) {
  return isObject(value) && typeof value.text === "string" && typeof value.full === "string";
}

/** The live grants of `threadId` (each checked for the fields the panel shows). */
export async function listGrants(endpoint, threadId) {
  const data = await askGrants(endpoint, { threadId });
  if (!Array.isArray(data.grants)) throw new GrantsError("the server's list could not be read");
  return data.grants.filter((g) => isObject(g) && typeof g.id === "string" && isShown(g.tool));
}

/** Revoke the grant `id` of `threadId`. */
export async function revokeGrant(endpoint, threadId, id) {
  const data = await askGrants(endpoint, { threadId, revoke: id });
  if (data.revoked !== true) throw new GrantsError("the server did not revoke it");
}

/** A grant's line: what it covers, where, by whom, for how long; and its Revoke button. */
function grantItem(grant, onRevoke) {
  const what = isShown(grant.call) && grant.match !== "tool"
    ? [shownNode("pre", grant.call, { class: "grant-call" }), h("p", { class: "grant-match", text: "Only with exactly these arguments." })]
    : [h("div", { class: "grant-call" }, shownNode("code", grant.tool), " with any arguments")];
  const where = grant.scope === "thread" ? "In this conversation." : grant.scope === "principal" ? "For you, in every conversation." : "";
  const by = isObject(grant.grantedBy) && typeof grant.grantedBy.name === "string" && grant.grantedBy.name
    ? h("div", { class: "label" }, "Approved by ", shownNode("span", shownText(grant.grantedBy.name, { multiline: false, limit: 200 })), ".")
    : null;
  const expiry = h("p", { class: "expiry" });
  const toolName = grant.tool.full;
  const revoke = h("button", { type: "button", class: "secondary", text: "Revoke", "aria-label": `Revoke: ask again before ${toolName} runs` });
  revoke.addEventListener("click", () => onRevoke(grant, revoke));
  const node = h(
    "li",
    { class: "grant", "data-grant-id": grant.id },
    h("p", { class: "label", text: "Not asked again for:" }),
    what,
    where ? h("p", { class: "grant-scope", text: where }) : null,
    by,
    expiry,
    h("div", { class: "actions" }, revoke),
  );
  const tick = (now) => {
    expiry.textContent = typeof grant.expires === "string" ? timeLeft(grant.expires, now) : "Expiry unknown.";
  };
  tick(Date.now());
  return { node, tick, expires: Date.parse(grant.expires) };
}

/**
 * The "Remembered approvals" panel in `el` (its list `list`, its status `status`, its error
 * `error`), for the thread `threadId()` names now. `refresh()` lists again; `clear()` empties
 * it (a new conversation); `tick()` updates the time left once a second.
 */
export function grantsPanel({ el, list, status, error }, endpoint, threadId) {
  let items = [];
  let asked = 0; // a newer listing (or a new conversation) wins over an older answer
  let shownThread = null;
  let refreshAt = null; // when the first listed grant expires, list again

  function showError(title, err) {
    const code = err && err.code ? visible(String(err.code)) : "";
    const known = code && Object.hasOwn(RUN_ERROR_WORDS, err.code) ? RUN_ERROR_WORDS[err.code] : "";
    const detail = err && err.message ? shownText(String(err.message), { multiline: false, limit: 400 }) : null;
    fill(
      error,
      h("p", { class: "error-title", text: title }),
      known ? h("p", { class: "error-detail", text: known }) : detail ? shownNode("p", detail, { class: "error-detail" }) : null,
      code ? h("p", { class: "error-code" }, "Code: ", h("code", { text: code })) : null,
    );
    error.hidden = false;
    el.hidden = false;
  }

  function show(grants) {
    items = grants.map((g) => grantItem(g, revoke));
    fill(list, items.map((i) => i.node));
    list.hidden = items.length === 0;
    status.textContent = items.length ? "" : "None: every call that needs approval asks first.";
    const times = items.map((i) => i.expires).filter((t) => !Number.isNaN(t));
    refreshAt = times.length ? Math.min(...times) : null;
  }

  async function refresh() {
    const thread = threadId();
    const mine = ++asked;
    let grants;
    try {
      grants = await listGrants(endpoint, thread);
    } catch (err) {
      if (mine !== asked) return;
      if (err instanceof GrantsError && err.code === "GRANTS_NOT_KEPT" && shownThread === null) {
        el.hidden = true; // nothing can be remembered here, so nothing to list
        return;
      }
      showError("The remembered approvals of this conversation could not be listed.", err);
      return;
    }
    if (mine !== asked) return;
    error.hidden = true;
    error.replaceChildren();
    // A conversation with nothing remembered shows no panel, until it has had some.
    if (!grants.length && shownThread !== thread) {
      el.hidden = true;
      return;
    }
    shownThread = thread;
    show(grants);
    el.hidden = false;
  }

  async function revoke(grant, button) {
    const thread = threadId();
    button.disabled = true;
    try {
      await revokeGrant(endpoint, thread, grant.id);
    } catch (err) {
      if (thread !== threadId()) return;
      button.disabled = false;
      // One that is gone already leaves the list first; the error says why, after it.
      if (err instanceof GrantsError && err.code === "GRANT_NOT_FOUND") await refresh();
      if (thread === threadId()) showError("The remembered approval could not be revoked.", err);
      return;
    }
    if (thread !== threadId()) return;
    await refresh();
    if (error.hidden) status.textContent = items.length ? "Revoked: that call asks again." : "Revoked: that call asks again. Nothing else is remembered.";
  }

  function clear() {
    asked += 1;
    shownThread = null;
    items = [];
    refreshAt = null;
    list.replaceChildren();
    error.hidden = true;
    error.replaceChildren();
    status.textContent = "";
    el.hidden = true;
  }

  function tick(now = Date.now()) {
    for (const item of items) item.tick(now);
    if (refreshAt !== null && refreshAt <= now) {
      refreshAt = null;
      refresh();
    }
  }

  return { refresh, clear, tick };
}
