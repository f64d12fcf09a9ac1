/** `hookbus approvals`: list, show and answer approval requests (docs/approvals.md). */
import type { NatsConnection } from "@nats-io/transport-node";
import { answerApproval, listApprovals, showApproval } from "../../approvals/client.js";
import type { ApprovalEntry } from "../../approvals/entry.js";
import { HookbusError } from "../../foundation/errors.js";
import { sleep } from "../../foundation/time.js";
import { parseCommand, type Command } from "../command.js";
import { connectNats } from "../../bus/connect.js";
import type { Output } from "../output.js";

const HELP = `usage: hookbus approvals list [--all] [--json] [--watch]
       hookbus approvals show ID [--json]
       hookbus approvals approve ID --as NAME [--group G] [--reason TEXT] [--from WHERE] [--json]
       hookbus approvals deny ID --as NAME [--group G] [--reason TEXT] [--from WHERE] [--json]

Approval requests are before_tool_call decisions a policy held for a person (requireApproval).
list shows the pending ones (--all: settled ones too, kept 7 days; --watch: print each new or
changed request until Ctrl-C). approve and deny answer as NAME, the approver user of
\`hookbus auth\` this connection's --nkey belongs to: the server refuses any other name. A request
that names groups needs --group (one of them; each named group must approve). The answer is bound
to the digest show prints: a request re-opened for another call refuses it.

options:
  --as NAME       the approver's name (required to answer)
  --group G       the group answered for (default: none)
  --reason TEXT   why (recorded with the answer)
  --from WHERE    where the answer came from, for the record (default cli)
  --json          JSON instead of text`;

function line(e: ApprovalEntry): string {
  const state = e.settlement === undefined ? "pending" : e.settlement.resolution;
  const groups = e.request.approvers.length === 0 ? "any" : e.request.approvers.join("+");
  const askedBy = e.request.askedBy.map((a) => a.policy).join(",");
  return `${e.id}  ${state}  ${e.request.severity}  ${e.toolName}  "${e.request.title}"  agent=${e.agentId} session=${e.sessionKey} groups=${groups} asked-by=${askedBy} expires=${e.expiresAt}`;
}

/** An approval that would have let the call run, blocked by an emergency stop in force by then. */
function stoppedNote(e: ApprovalEntry): string {
  const stop = e.settlement?.stop;
  return stop === undefined
    ? ""
    : `, but the call is blocked: ${stop.kind} ${stop.name} is under an emergency stop (by ${stop.by} at ${stop.at})`;
}

function details(e: ApprovalEntry): string[] {
  const out = [
    `id:          ${e.id}`,
    `state:       ${e.settlement === undefined ? "pending" : `${e.settlement.resolution} (${e.settlement.effect})${stoppedNote(e)}`}`,
    `title:       ${e.request.title}`,
    ...(e.request.description === undefined ? [] : [`description: ${e.request.description}`]),
    `severity:    ${e.request.severity}`,
    `tool:        ${e.toolName}`,
    `params:      ${e.params === undefined ? "(too large to show)" : JSON.stringify(e.params)}`,
    `call:        ${e.callId} (agent ${e.agentId}, session ${e.sessionKey}, decision #${e.decisionSeq})`,
    `digest:      ${e.callDigest}`,
    `approvers:   ${e.request.approvers.length === 0 ? "any approver" : e.request.approvers.join(" and ")}`,
    `on timeout:  ${e.request.timeoutBehavior} at ${e.expiresAt}`,
    `asked by:    ${e.request.askedBy.map((a) => `${a.policy} ("${a.title}")`).join(", ")}`,
  ];
  for (const a of e.answers)
    out.push(
      `answer:      ${a.decision} by ${a.approver}${a.group === "-" ? "" : ` for ${a.group}`} at ${a.at}${a.reason === undefined ? "" : `: ${a.reason}`}${a.from === undefined ? "" : ` (from ${a.from})`}`,
    );
  if (e.recordSeq !== undefined) out.push(`record:      #${e.recordSeq}`);
  return out;
}

async function watch(
  nc: NatsConnection,
  namespace: string | undefined,
  out: Output,
  json: boolean,
) {
  const seen = new Map<string, string>();
  let stopped = false;
  const stop = () => (stopped = true);
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  out.error("watching approval requests (Ctrl-C to stop)");
  try {
    while (!stopped) {
      for (const e of await listApprovals(nc, namespace)) {
        const version = `${e.settlement?.resolution ?? "pending"}:${e.answers.length}:${e.recordSeq ?? 0}`;
        if (seen.get(e.id) === version) continue;
        seen.set(e.id, version);
        out.print(json ? JSON.stringify(e) : line(e));
      }
      await sleep(1000);
    }
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}

interface AnswerFlags {
  json?: boolean | undefined;
  as?: string | undefined;
  group?: string | undefined;
  reason?: string | undefined;
  from?: string | undefined;
  namespace?: string | undefined;
}

/** `approve ID` / `deny ID`: answer one request, bound to the digest the approver saw. */
async function answer(
  nc: NatsConnection,
  action: "approve" | "deny",
  id: string | undefined,
  values: AnswerFlags,
  out: Output,
): Promise<number> {
  const json = values.json === true;
  if (id === undefined) throw new HookbusError("HOOKBUS_USAGE", `${action} needs an ID`);
  if (values.as === undefined)
    throw new HookbusError("HOOKBUS_USAGE", `${action} needs --as NAME (your approver user)`);
  // Bound to what the approver could have seen: the digest as the request shows it now.
  const shown = await showApproval(nc, id, values.namespace);
  if (shown.settlement !== undefined) {
    // The coordinator takes a repeated answer as a retry and replies with the entry; a
    // person must not read "approved" for a request that was settled before they answered.
    const by = shown.answers.map((a) => a.approver).join(", ");
    throw new HookbusError(
      "HOOKBUS_APPROVAL_SETTLED",
      `approval ${id} was already settled: ${shown.settlement.resolution}${by === "" ? "" : ` (by ${by})`}; your ${action} was not sent`,
      { id, resolution: shown.settlement.resolution },
    );
  }
  const reply = await answerApproval(
    nc,
    {
      id,
      decision: action,
      ...(values.reason === undefined ? {} : { reason: values.reason }),
      from: values.from ?? "cli",
      callDigest: shown.callDigest,
    },
    {
      ...(values.namespace === undefined ? {} : { namespace: values.namespace }),
      approver: values.as,
      ...(values.group === undefined ? {} : { group: values.group }),
    },
  );
  if (json) out.print(JSON.stringify(reply.entry));
  else
    out.print(
      reply.entry.settlement === undefined
        ? `${id}: ${action} recorded; still waiting for ${reply.entry.request.approvers.join(" and ")}`
        : `${id}: ${reply.entry.settlement.resolution}${stoppedNote(reply.entry)} (record #${reply.entry.recordSeq ?? "?"})`,
    );
  return 0;
}

export const approvalsCommand: Command = {
  summary: "list, show, approve or deny approval requests (docs/approvals.md)",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, {
      json: { type: "boolean" },
      all: { type: "boolean" },
      watch: { type: "boolean" },
      as: { type: "string" },
      group: { type: "string" },
      reason: { type: "string" },
      from: { type: "string" },
    });
    const [action, id, extra] = positionals;
    if (values.help === true || action === undefined) {
      out.print(HELP);
      return action === undefined && values.help !== true ? 2 : 0;
    }
    if (extra !== undefined)
      throw new HookbusError("HOOKBUS_USAGE", `unexpected argument "${extra}"`);
    const json = values.json === true;
    const nc = await connectNats({ ...values, name: "hookbus-approvals" });
    try {
      switch (action) {
        case "list": {
          if (values.watch === true) {
            await watch(nc, values.namespace, out, json);
            return 0;
          }
          const entries = (await listApprovals(nc, values.namespace)).filter(
            (e) => values.all === true || e.settlement === undefined,
          );
          // --json: one record per line, as every other --json of the CLI.
          if (json) for (const e of entries) out.print(JSON.stringify(e));
          else if (entries.length === 0) out.print("no pending approval requests");
          else for (const e of entries) out.print(line(e));
          return 0;
        }
        case "show": {
          if (id === undefined) throw new HookbusError("HOOKBUS_USAGE", "show needs an ID");
          const entry = await showApproval(nc, id, values.namespace);
          if (json) out.print(JSON.stringify(entry));
          else for (const l of details(entry)) out.print(l);
          return 0;
        }
        case "approve":
        case "deny": {
          return await answer(nc, action, id, values, out);
        }
        default:
          throw new HookbusError("HOOKBUS_USAGE", `unknown approvals action "${action}"`);
      }
    } finally {
      await nc.close();
    }
  },
};
