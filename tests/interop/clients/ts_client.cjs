// The official TypeScript AG-UI client (@ag-ui/client's HttpAgent, pinned in
// tests/interop/npm/) as the interop lane drives it against our server:
//   NODE_PATH=<cache>/node_modules node ts_client.cjs URL SCENARIO
// SCENARIO is "plain", "approve" or "reject". It prints one JSON object: the assistant
// texts, the interrupts the agent held pending, the event types of each run, and errors.
const { HttpAgent } = require("@ag-ui/client");

async function main(url, scenario) {
  const prompt = scenario === "plain" ? "hello" : "please delete the report.txt";
  const agent = new HttpAgent({
    url,
    threadId: `t-ts-${scenario}`,
    initialMessages: [{ id: "u1", role: "user", content: prompt }],
  });
  const out = { runs: [], interrupts: [], errors: [] };
  const run = async (parameters) => {
    const types = [];
    await agent.runAgent(parameters, {
      onEvent: ({ event }) => {
        types.push(event.type);
      },
      onRunFailed: ({ error }) => {
        out.errors.push(String(error));
      },
    });
    out.runs.push(types);
  };
  await run({});
  out.interrupts = agent.pendingInterrupts.map((i) => ({ ...i }));
  if (scenario !== "plain") {
    const resume = agent.pendingInterrupts.map((i) => ({
      interruptId: i.id,
      status: "resolved",
      payload: { approved: scenario === "approve" },
    }));
    await run({ resume });
  }
  out.pendingAfter = agent.pendingInterrupts.length;
  out.texts = agent.messages
    .filter((m) => m.role === "assistant" && typeof m.content === "string" && m.content)
    .map((m) => m.content);
  out.tools = agent.messages.filter((m) => m.role === "tool").map((m) => m.content);
  return out;
}

main(process.argv[2], process.argv[3]).then(
  (out) => console.log(JSON.stringify(out)),
  (error) => {
    console.log(JSON.stringify({ fatal: String(error && error.stack ? error.stack : error) }));
    process.exitCode = 1;
  },
);
