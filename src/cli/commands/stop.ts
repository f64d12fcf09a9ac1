/**
 * `hookbus stop agent|tool NAME` and `hookbus resume agent|tool NAME`: the emergency stop
 * (docs/operations.md, "Emergency stop"). The change is stored by compare-and-set in the registry
 * bucket's `stops` key (its history is the record of who stopped what), then confirmed like a
 * registry apply: every live coordinator must report the new revision before the deadline.
 */
import { userInfo } from "node:os";
import { HookbusError } from "../../foundation/errors.js";
import { Subjects } from "../../bus/subjects.js";
import { connectNats } from "../../bus/connect.js";
import { applyEmergencyStop } from "../../registry/emergency-stop.js";
import { isEnforced } from "../../registry/propagation.js";
import {
  AGENT_STOPS_STALE_AFTER_MS,
  parseStopTarget,
  type StopChange,
} from "../../registry/stops.js";
import { parseCommand, type Command } from "../command.js";
import { formatPropagation, parseWaitMs } from "./registry.js";

const HELP = (
  action: "stop" | "resume",
) => `usage: hookbus ${action} agent ID [--reason TEXT] [--by NAME] [--wait-ms N] [--json]
       hookbus ${action} tool NAME [--reason TEXT] [--by NAME] [--wait-ms N] [--json]

stop    block every call of an agent (by agent id) or of a tool (by the tool name the policies
        see, e.g. exec or mcp__github__delete_repo; or a whole class: class:shell, class:file-write,
        ...) at every coordinator, before any policy is asked, and keep agents from answering
        such calls on their fast path. Each blocked call is recorded, blocked by
        hookbus:emergency-stop with "emergency stop: tool NAME stopped by WHO at TIME: REASON".
        A call held for approval is blocked too when it is approved (or times out to allow)
        after the stop; a call decided before the stop keeps its decision.
resume  lift that stop.

The change is stored in the registry bucket (key "stops", whose history keeps every change with
who, when and why); only the operator role may write it. Then waits (--wait-ms, default 5000; 0:
not at all) until every live coordinator reports the new stop list in force, and prints how long
that took; exit 1, naming them, when some did not. Agents are not asked: one whose last read of
the list is older than 750 ms answers no call on its fast path, so the command also waits
until 750 ms after the change was stored. Active stops are listed by hookbus status.

options:
  --reason TEXT   why (up to 1024 characters), recorded with the stop
  --by NAME       who (default: the operating-system user)
  --wait-ms N     the longest to wait for coordinators to confirm (default 5000)
  --json          the result as JSON`;

function commandFor(action: "stop" | "resume"): Command {
  return {
    summary:
      action === "stop"
        ? "emergency stop: block every call of an agent or a tool, confirmed"
        : "lift an emergency stop of an agent or a tool, confirmed",
    async run(argv, out) {
      const { values, positionals } = parseCommand(argv, {
        reason: { type: "string" },
        by: { type: "string" },
        "wait-ms": { type: "string" },
        json: { type: "boolean" },
      });
      if (values.help === true) {
        out.print(HELP(action));
        return 0;
      }
      if (positionals.length !== 2)
        throw new HookbusError(
          "HOOKBUS_USAGE",
          `hookbus ${action} takes agent ID or tool NAME (hookbus ${action} --help)`,
        );
      const target = parseStopTarget(positionals[0], positionals[1]);
      const change: StopChange = {
        action,
        ...target,
        by: values.by ?? operatingSystemUser(),
        at: new Date().toISOString(),
        reason: values.reason ?? "",
      };
      const waitMs = parseWaitMs(values["wait-ms"]);
      const nc = await connectNats(values);
      try {
        const subjects = new Subjects(values.namespace);
        const { list, changed, propagation } = await applyEmergencyStop(nc, subjects, change, {
          waitMs,
        });
        if (values.json === true)
          out.print(
            JSON.stringify({
              revision: list.revision,
              changed,
              change,
              stops: list.stops,
              propagation,
            }),
          );
        else {
          out.print(
            changed
              ? `${action === "stop" ? "stopped" : "resumed"} ${target.kind} ${target.name}: stop list revision ${list.revision}, ${list.size} stop(s) in force`
              : `${target.kind} ${target.name} was not stopped: nothing stored`,
          );
          if (propagation !== undefined)
            out.print(
              `${formatPropagation(propagation)}; agents' fast paths: within ${AGENT_STOPS_STALE_AFTER_MS} ms by construction`,
            );
        }
        return propagation !== undefined && !isEnforced(propagation) ? 1 : 0;
      } finally {
        await nc.drain();
      }
    },
  };
}

function operatingSystemUser(): string {
  try {
    return userInfo().username || "unknown";
  } catch {
    // No passwd entry for this uid (some containers): say so rather than fail the stop.
    return "unknown";
  }
}

export const stopCommand = commandFor("stop");
export const resumeCommand = commandFor("resume");
