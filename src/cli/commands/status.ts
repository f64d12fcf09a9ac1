/** `hookbus status`: what is declared, what is alive, what is wrong (discovery over NATS). */
import { HookbusError } from "../../errors.js";
import { DISCOVERY_DEFAULTS } from "../../observability/discovery.js";
import { formatStatus } from "../../observability/status-format.js";
import { readStatus } from "../../observability/status-read.js";
import { parseCommand, type Command } from "../command.js";
import { connectNats } from "../connect.js";

const HELP = `usage: hookbus status [--json] [--check] [--wait MS]

Shows the registry revision in force and, per declared policy and hook, the live workers (count,
versions), their recent latency and error rate, the live coordinators and their log lag. Asks every
worker and coordinator of the namespace on <ns>.discover and collects replies until they stop.

options:
  --json      the report as JSON
  --check     exit 1 when anything is wrong (a declared policy with no live worker, no coordinator,
              a coordinator on an old registry revision)
  --wait MS   the longest to wait for replies (default ${DISCOVERY_DEFAULTS.maxWaitMs}, max 60000)`;

export const statusCommand: Command = {
  summary: "show live workers, coordinators and problems per declared policy",
  async run(argv, out) {
    const { values } = parseCommand(argv, {
      json: { type: "boolean" },
      check: { type: "boolean" },
      wait: { type: "string" },
    });
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    const maxWaitMs = values.wait === undefined ? undefined : Number(values.wait);
    if (
      maxWaitMs !== undefined &&
      (!Number.isInteger(maxWaitMs) || maxWaitMs < 1 || maxWaitMs > 60_000)
    ) {
      throw new HookbusError(
        "HOOKBUS_INVALID_ARGUMENT",
        `--wait must be 1-60000 milliseconds, got ${JSON.stringify(values.wait)}`,
        { argument: "wait" },
      );
    }
    const nc = await connectNats({ ...values, name: "hookbus-status" });
    try {
      const report = await readStatus(nc, {
        ...(values.namespace === undefined ? {} : { namespace: values.namespace }),
        ...(maxWaitMs === undefined ? {} : { maxWaitMs }),
      });
      if (values.json === true) out.print(JSON.stringify(report, null, 2));
      else for (const line of formatStatus(report)) out.print(line);
      return values.check === true && report.problems.length > 0 ? 1 : 0;
    } finally {
      await nc.close();
    }
  },
};
