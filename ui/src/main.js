// The page AGUIServer(ui=True) serves: a person's view of one AG-UI thread. It talks to the
// endpoint it was loaded from (GET / is this page, POST / is the AG-UI endpoint) through the
// official @ag-ui/client, and keeps the thread (messages and a pending pause) in the
// browser's storage, so a reload in the middle of a pause shows the same cards.

import { HttpAgent, randomUUID } from "@ag-ui/client";
import { isApproval, pauseView } from "./cards.js";
import { fill, h } from "./dom.js";
import { describeFailure, describeRunError, guardedFetch } from "./errors.js";
import { grantsPanel } from "./grants.js";
import { createConversation, resultText } from "./render.js";
import { askDisplay, shownNode } from "./shown.js";

const endpoint = location.href.split("#")[0].split("?")[0];
const STORAGE_KEY = `agui-chat:thread:${endpoint}`;

const $ = (id) => document.getElementById(id);
const log = $("log");
const pauseSlot = $("pause");
const errorBox = $("error");
const banner = $("banner");
const composer = $("composer");
const input = $("message");
const sendButton = $("send");
const stopButton = $("stop");
const composerHint = $("composer-hint");
$("endpoint").textContent = endpoint;

const renderConversation = createConversation(log);
const state = { running: false, stopRequested: false, interrupts: [], pause: null, reconnecting: null, outcomes: {}, shown: { calls: {}, results: {} } };
const saved = load();
let agent = newAgent(saved);
// The conversation's remembered approvals, listed by the server (grants.js).
const grants = grantsPanel(
  { el: $("grants"), list: $("grants-list"), status: $("grants-status"), error: $("grants-error") },
  endpoint,
  () => agent.threadId,
);

function load() {
  try {
    const raw = localStorage.getItem(STORAGE_KEY);
    if (!raw) return null;
    const data = JSON.parse(raw);
    if (!data || data.version !== 1 || typeof data.threadId !== "string" || !Array.isArray(data.messages)) return null;
    return data;
  } catch {
    return null;
  }
}

function save() {
  try {
    localStorage.setItem(
      STORAGE_KEY,
      JSON.stringify({
        version: 1,
        threadId: agent.threadId,
        messages: agent.messages,
        pause: state.interrupts.length ? { interrupts: state.interrupts } : null,
        outcomes: state.outcomes,
        shown: state.shown,
      }),
    );
  } catch {
    // Storage may be full or disabled: the page still works, it just forgets on reload.
  }
}

function newAgent(saved) {
  const created = new HttpAgent({
    url: endpoint,
    threadId: saved ? saved.threadId : randomUUID(),
    initialMessages: saved ? saved.messages : [],
    fetch: guardedFetch,
  });
  state.interrupts = saved && saved.pause && Array.isArray(saved.pause.interrupts) ? saved.pause.interrupts : [];
  state.outcomes = saved && saved.outcomes && typeof saved.outcomes === "object" ? saved.outcomes : {};
  const shown = saved && saved.shown;
  state.shown = shown && shown.calls && shown.results ? shown : { calls: {}, results: {} };
  created.pendingInterrupts = state.interrupts;
  return created;
}

// -- rendering ---------------------------------------------------------------------------

let scheduled = false;
function schedule() {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => {
    scheduled = false;
    render();
  });
}

function waitingFor() {
  const waiting = new Map();
  for (const i of state.interrupts) {
    if (isApproval(i)) waiting.set(i.toolCallId, "Waiting for your approval");
    else {
      const callId = i.metadata && i.metadata.agui_chat && i.metadata.agui_chat.toolCallId;
      if (callId) waiting.set(callId, "Waiting for your answer");
    }
  }
  return waiting;
}

function render() {
  const nearBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 80;
  renderConversation(agent.messages, { waiting: waitingFor(), outcomes: state.outcomes, shown: state.shown, running: state.running });
  $("empty").hidden = agent.messages.length > 0;
  const pending = state.interrupts.length > 0;
  input.disabled = state.running || pending;
  sendButton.disabled = state.running || pending;
  stopButton.hidden = !state.running;
  composerHint.textContent = pending
    ? "Answer the requests above to continue."
    : state.running
      ? "The agent is answering…"
      : "";
  if (nearBottom) window.scrollTo(0, document.body.scrollHeight);
}

function showPause({ focus }) {
  if (!state.interrupts.length) {
    state.pause = null;
    pauseSlot.replaceChildren();
    return;
  }
  state.pause = pauseView(
    state.interrupts,
    agent.messages,
    (entries, outcomes) => {
      Object.assign(state.outcomes, outcomes);
      run({ resume: entries });
    },
    endpoint,
  );
  pauseSlot.replaceChildren(state.pause.el);
  if (focus) state.pause.focus();
}

function showError(described) {
  if (!described) {
    errorBox.hidden = true;
    errorBox.replaceChildren();
    return;
  }
  fill(
    errorBox,
    h("p", { class: "error-title", text: described.title }),
    described.detail ? shownNode("p", described.detail, { class: "error-detail" }) : null,
    described.code ? h("p", { class: "error-code" }, "Code: ", h("code", { text: described.code })) : null,
  );
  errorBox.hidden = false;
}

/** Ask the server how to show the calls and results not shown yet (shown.js). */
async function showCalls() {
  const calls = [];
  const callIds = [];
  const texts = [];
  const resultIds = [];
  for (const m of agent.messages) {
    for (const c of m.toolCalls || []) {
      if (state.shown.calls[c.id]) continue;
      callIds.push(c.id);
      calls.push({ name: c.function.name, arguments: c.function.arguments || "" });
    }
    if (m.role === "tool" && !state.shown.results[m.toolCallId]) {
      resultIds.push(m.toolCallId);
      texts.push(resultText(m));
    }
  }
  if (!calls.length && !texts.length) return;
  try {
    const got = await askDisplay(endpoint, calls, texts);
    callIds.forEach((id, i) => (state.shown.calls[id] = got.calls[i]));
    resultIds.forEach((id, i) => (state.shown.results[id] = got.texts[i]));
  } catch {
    return; // shown as not ready; asked again after the next run
  }
  save();
  render();
}

// -- running -------------------------------------------------------------------------------

async function run(params, { restoreText = "", before = structuredClone(agent.messages) } = {}) {
  if (state.running) return;
  state.running = true;
  const interruptsBefore = state.interrupts;
  agent.pendingInterrupts = interruptsBefore;
  // Answered requests wait no more: their calls run (or not) in this run.
  if (params.resume) state.interrupts = [];
  showError(null);
  render();
  let failure = null;
  let runError = null;
  let finished = false;
  let cancelled = false;
  state.stopRequested = false;
  const subscriber = {
    onMessagesChanged: () => schedule(),
    onRunFinishedEvent: ({ outcome, interrupts }) => {
      finished = true;
      cancelled = outcome === "cancelled";
      state.interrupts = outcome === "interrupt" && Array.isArray(interrupts) ? interrupts : [];
    },
    onRunErrorEvent: ({ event }) => {
      // @ag-ui/client reports its own abort (the Stop button) as a RUN_ERROR coded "abort".
      if (state.stopRequested && event.code === "abort") return;
      runError = describeRunError(event.code, event.message);
    },
    onRunFailed: ({ error }) => {
      failure = failure || error;
    },
  };
  const thread = agent;
  try {
    await thread.runAgent(params, subscriber);
  } catch (error) {
    failure = failure || error;
  }
  state.running = false;
  if (agent !== thread) {
    // "New conversation" stopped this run and replaced its thread: nothing of it to show.
    render();
    return;
  }
  const stopped = state.stopRequested && !finished && !runError;
  if (stopped || cancelled) {
    // What streamed is kept: the calls of this run (or of the answers it carried) that got no
    // result say they were cancelled, and by whom; the answers were sent, so no pause is left.
    const asked = new Set(interruptsBefore.map((i) => i.toolCallId).filter(Boolean));
    const known = new Set(before.flatMap((m) => (m.toolCalls || []).map((c) => c.id)));
    const answered = new Set(agent.messages.filter((m) => m.role === "tool").map((m) => m.toolCallId));
    for (const m of agent.messages)
      for (const c of m.toolCalls || [])
        if ((!known.has(c.id) || asked.has(c.id)) && !answered.has(c.id)) state.outcomes[c.id] = { kind: "cancelled", by: stopped ? "you" : "server" };
    if (stopped) {
      state.interrupts = [];
      fill(banner, h("p", { text: "You stopped the run. What it had sent is kept; a call without a result was cancelled. Send a message to go on." }));
      banner.hidden = false;
    }
  } else if (runError) {
    showError(runError);
    if (!finished) state.interrupts = interruptsBefore;
  } else if (failure || !finished) {
    const described = describeFailure(failure || new Error("the stream ended before the run finished"), endpoint);
    agent.setMessages(before);
    state.interrupts = interruptsBefore;
    showError(described);
    if (restoreText && !input.value) input.value = restoreText;
    if (described.kind === "unreachable") reconnect();
  }
  agent.pendingInterrupts = state.interrupts;
  save();
  render();
  showPause({ focus: true });
  showCalls();
  // An approval asked to be remembered: list what the server now remembers (or why not).
  if (params.resume && params.resume.some((e) => e && e.payload && e.payload.remember)) grants.refresh();
  if (!state.interrupts.length && !input.disabled) input.focus();
}

function reconnect() {
  if (state.reconnecting) return;
  fill(banner, h("p", { text: "Reconnecting to the agent server… (checking every 3 seconds)" }));
  banner.hidden = false;
  state.reconnecting = setInterval(async () => {
    try {
      await fetch(endpoint, { method: "GET", cache: "no-store" });
    } catch {
      return;
    }
    clearInterval(state.reconnecting);
    state.reconnecting = null;
    fill(banner, h("p", { text: "The agent server is reachable again. Send your message or your answers again." }));
  }, 3000);
}

composer.addEventListener("submit", (event) => {
  event.preventDefault();
  const text = input.value.trim();
  if (!text || state.running || state.interrupts.length) return;
  input.value = "";
  banner.hidden = true;
  const before = structuredClone(agent.messages);
  agent.addMessage({ id: randomUUID(), role: "user", content: text });
  run({}, { restoreText: text, before });
});

input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    composer.requestSubmit();
  }
});

stopButton.addEventListener("click", () => {
  state.stopRequested = true;
  agent.abortRun();
});

$("new-thread").addEventListener("click", () => {
  if (state.running) agent.abortRun();
  try {
    localStorage.removeItem(STORAGE_KEY);
  } catch {
    // nothing kept, nothing to forget
  }
  agent = newAgent(null);
  state.outcomes = {};
  state.shown = { calls: {}, results: {} };
  grants.clear();
  showError(null);
  banner.hidden = true;
  showPause({ focus: false });
  render();
  input.focus();
});

setInterval(() => {
  if (state.pause) state.pause.tick();
  grants.tick();
}, 1000);

render();
showPause({ focus: false });
showCalls();
if (saved) grants.refresh(); // a new conversation has nothing remembered yet
document.body.dataset.ready = "true";
