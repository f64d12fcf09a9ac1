/**
 * Reading the log from code (docs/audit.md "The library API"): the blocks of the last day, one
 * session's timeline, then new records as they are stored, until Ctrl-C.
 *   NATS_URL=nats://127.0.0.1:4222 npx tsx examples/audit-library.ts [AGENT] [SESSION]
 */
import { connect } from "@nats-io/transport-node";
import { Bus } from "hookbus";
import { queryLog, sessionTimeline, tailLog } from "hookbus/audit";

const [agentId = "support-bot", sessionKey = "conv-42"] = process.argv.slice(2);
const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
const bus = await Bus.open(nc, { namespace: process.env.HOOKBUS_NAMESPACE ?? "hookbus" });

// Bounded: ends when it has caught up (at once when nothing matches).
const blocks = queryLog(bus, { outcome: "block", since: new Date(Date.now() - 86_400_000) });
for await (const entry of blocks) {
  if (entry.record.kind === "decision")
    console.log(entry.storedAt, entry.address.agentId, entry.record.decision.blockedBy);
}
console.log(blocks.stats); // { filterSubject, pending, delivered, matched }

// A session's timeline, in log order.
for (const step of await sessionTimeline(bus, sessionKey, { agentId })) {
  if (step.kind === "decision")
    console.log(
      step.hook,
      step.outcome,
      step.summary,
      step.policies.map((p) => [p.policy, p.latencyMs]),
    );
}

// Follow new records until Ctrl-C; records stored after `await tailLog(...)` are all delivered.
const stop = new AbortController();
process.once("SIGINT", () => stop.abort());
const tail = await tailLog(bus, { agentId }, { signal: stop.signal });
console.log("following new records; Ctrl-C stops");
for await (const entry of tail) {
  console.log(entry.seq, entry.record.kind);
}
await nc.drain();
