/** `hookbus audit verify [--session S] [--agent A] [--json]`: check the log's hash chains. */
import { formatVerifyReport, verifyLog } from "../../audit/verify.js";
import { Bus } from "../../bus/bus.js";
import { Subjects } from "../../bus/subjects.js";
import { HookbusError } from "../../errors.js";
import { parseCommand, type Command } from "../command.js";
import { connectNats } from "../connect.js";

const HELP = `usage: hookbus audit verify [--session S] [--agent A] [--json] [--verbose] [--settle-ms MS] [--allow-empty]

Recompute every session's hash chain from the log and the chain heads (bucket <ns>_chain) and
report each record that was altered, removed or inserted. Exits 0 when the log is intact, 1 when
anything is wrong, 2 on a usage error.

--session S    only the sessions with this session key
--agent A      only this agent's sessions
--json         the whole report as one JSON document
--verbose      list intact sessions too
--settle-ms MS before reporting positions claimed but not stored, wait MS and look again
               (records in flight); default 1000, 0 reports at once
--allow-empty  exit 0 when nothing matched (default: HOOKBUS_EMPTY_SELECTION, exit 1, since
               checking nothing proves nothing)`;

export const auditVerifyCommand: Command = {
  summary: "check that no log record was altered, removed or inserted (exit 1 if any was)",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, {
      session: { type: "string" },
      agent: { type: "string" },
      json: { type: "boolean" },
      verbose: { type: "boolean", short: "v" },
      "settle-ms": { type: "string" },
      "allow-empty": { type: "boolean" },
    });
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    if (positionals.length > 0) {
      out.error(HELP);
      return 2;
    }
    let settleMs: number | undefined;
    if (values["settle-ms"] !== undefined) {
      settleMs = Number(values["settle-ms"]);
      if (!Number.isInteger(settleMs) || settleMs < 0) {
        throw new HookbusError(
          "HOOKBUS_INVALID_ARGUMENT",
          `--settle-ms must be a whole number of milliseconds, not ${JSON.stringify(values["settle-ms"])}`,
          { argument: "settle-ms" },
        );
      }
    }
    // A bad namespace is reported before connecting.
    const subjects = new Subjects(values.namespace);
    const nc = await connectNats({ ...values, name: "hookbus-audit-verify" });
    try {
      const bus = await Bus.open(nc, { namespace: subjects.namespace });
      const report = await verifyLog(bus, {
        ...(values.agent === undefined ? {} : { agentId: values.agent }),
        ...(values.session === undefined ? {} : { sessionKey: values.session }),
        ...(settleMs === undefined ? {} : { settleMs }),
      });
      out.print(
        values.json === true
          ? JSON.stringify(report, null, 2)
          : formatVerifyReport(report, { verbose: values.verbose === true }),
      );
      if (report.records === 0 && report.sessions.length === 0 && values["allow-empty"] !== true) {
        throw new HookbusError(
          "HOOKBUS_EMPTY_SELECTION",
          `no records matched${describeFilter(values)} in namespace ${subjects.namespace}: nothing was verified; check the selection and --namespace, or pass --allow-empty`,
          { namespace: subjects.namespace },
        );
      }
      return report.ok ? 0 : 1;
    } finally {
      await nc.drain();
    }
  },
};

function describeFilter(values: { session?: string | undefined; agent?: string | undefined }) {
  const parts = [
    ...(values.session === undefined ? [] : [`--session ${values.session}`]),
    ...(values.agent === undefined ? [] : [`--agent ${values.agent}`]),
  ];
  return parts.length === 0 ? "" : ` (${parts.join(" ")})`;
}
