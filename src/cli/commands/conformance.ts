/** `hookbus conformance worker --policy NAME -- COMMAND...`: the wire-protocol kit for policy workers. */
import { HookbusError } from "../../foundation/errors.js";
import { formatReport, runConformance } from "../../conformance/index.js";
import { parseCommand, type Command } from "../command.js";

const HELP = `usage: hookbus conformance worker --policy NAME [--json] [--only TEXT] -- COMMAND [ARG ...]

Starts a private setup (its own nats-server, a coordinator, a registry naming the policy), starts
the worker with COMMAND (NATS_URL and HOOKBUS_NAMESPACE in its environment; more instances are
started the same way) and drives it through the protocol's cases: every hook's events, verdict
shapes, errors, large bodies (gzip, blobs), malformed and oversized requests, deadlines, session
state, queue groups, drain on SIGTERM, a NATS restart and observations (acked once, redelivered
after a crash). The worker must serve the conformance policy of docs/conformance.md under NAME.
Prints a table (or --json) and exits 1 when a case fails.

options:
  --policy NAME   the policy the worker serves
  --json          the report as JSON
  --only TEXT     run only the cases whose name contains TEXT`;

export const conformanceCommand: Command = {
  summary: "check a policy worker in any language against the wire protocol",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, {
      policy: { type: "string" },
      json: { type: "boolean" },
      only: { type: "string" },
    });
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    const [what, ...command] = positionals;
    if (what !== "worker" || command.length === 0 || values.policy === undefined) {
      out.error(HELP);
      return 2;
    }
    const report = await runConformance({
      policy: values.policy,
      command,
      ...(values.only === undefined ? {} : { only: values.only }),
      ...(values.json === true
        ? {}
        : { onResult: (r) => out.error(`${r.ok ? "pass" : "FAIL"}  ${r.name}`) }),
    });
    out.print(values.json === true ? JSON.stringify(report, null, 2) : formatReport(report));
    if (report.failed > 0) {
      const failure = new HookbusError(
        "HOOKBUS_CONFORMANCE_FAILED",
        `${report.failed} of ${report.cases.length} conformance cases failed for policy ${values.policy}`,
        { failed: report.failed },
      );
      out.error(`${failure.code}: ${failure.message}`);
      return 1;
    }
    return 0;
  },
};
