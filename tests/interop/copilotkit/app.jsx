// The CopilotKit lane's page (tests/interop/test_copilotkit.py): CopilotKit 1.74's v2 API in
// front of an AGUIServer, no CopilotKit runtime: its HttpAgent (from the @ag-ui/client
// CopilotKit pins) posts straight to the page's own origin. useInterrupt renders the
// approval / question card, useHumanInTheLoop the frontend tool confirm_action; ids on the
// buttons are what the test clicks. Bundled by build.mjs (mk/copilotkit.mk).
import React from "react";
import { createRoot } from "react-dom/client";
import { HttpAgent } from "@ag-ui/client";
import {
  CopilotChat,
  CopilotKitProvider,
  useAgent,
  useCopilotKit,
  useHumanInTheLoop,
  useInterrupt,
} from "@copilotkit/react-core/v2";
import { z } from "zod";

const params = new URLSearchParams(window.location.search);
const threadId = params.get("thread") || "ck-thread";
window.__ckErrors = [];

const agent = new HttpAgent({ url: new URL("/agent", window.location.href).href, threadId });

function InterruptCard() {
  return useInterrupt({
    renderInChat: false,
    render: ({ interrupt, resolve, cancel }) => (
      <div id="interrupt" data-reason={interrupt?.reason ?? ""}>
        <p id="interrupt-message">{interrupt?.message}</p>
        <button id="approve" onClick={() => resolve({ approved: true })}>Approve</button>
        <button id="reject" onClick={() => resolve({ approved: false, reason: "not today" })}>
          Reject
        </button>
        <button id="answer" onClick={() => resolve({ build: 7 })}>Build 7</button>
        <button id="cancel" onClick={() => cancel()}>Cancel</button>
      </div>
    ),
  });
}

function Lane() {
  const { agent: live } = useAgent();
  const { copilotkit } = useCopilotKit();
  useHumanInTheLoop({
    name: "confirm_action",
    description: "Ask the person to confirm an action before you take it",
    parameters: z.object({ action: z.string() }),
    render: ({ status, args, respond }) =>
      status === "executing" ? (
        <button id="confirm" onClick={() => respond({ confirmed: true })}>
          Confirm {args.action}
        </button>
      ) : (
        <span className="hitl" data-status={status}>{String(args?.action ?? "")}</span>
      ),
  });
  const send = async () => {
    const input = document.getElementById("prompt");
    live.addMessage({ id: crypto.randomUUID(), role: "user", content: input.value });
    input.value = "";
    try {
      await copilotkit.runAgent({ agent: live });
    } catch (error) {
      window.__ckErrors.push(String(error && error.message ? error.message : error));
    }
  };
  const card = InterruptCard();
  return (
    <div>
      <input id="prompt" aria-label="Message" />
      <button id="send" onClick={send}>Send</button>
      <div id="card">{card}</div>
      <pre id="messages">{JSON.stringify(live.messages)}</pre>
      <span id="running" data-running={String(Boolean(live.isRunning))} />
    </div>
  );
}

function App() {
  return (
    <CopilotKitProvider
      agents__unsafe_dev_only={{ default: agent }}
      onError={(event) => window.__ckErrors.push(String(event?.error?.message ?? event?.code ?? event))}
    >
      <Lane />
      <CopilotChat />
    </CopilotKitProvider>
  );
}

createRoot(document.getElementById("root")).render(<App />);
document.body.dataset.ready = "true";
