/** `hookbus status`: what is declared, what is alive, what is wrong (discovery over NATS). */
import { HookbusError } from "../../foundation/errors.js";
import { DISCOVERY_DEFAULTS } from "../../observability/discovery.js";
import { formatComponents } from "../../status/components.js";
import { formatStatus } from "../../status/format.js";
import { readStatus } from "../../status/read.js";
import { formatStops } from "../../status/stops.js";
import { parseCommand, type Command } from "../command.js";
import { connectNats } from "../../bus/connect.js";

const HELP = `usage: hookbus status [--json] [--wait MS] [--max-seal-lag-s S] [--indexer-consumer NAME]

Shows the registry revision in force, the emergency stops in force (hookbus stop) and, per declared
policy: for a worker entry, the live workers (count, versions; a worker in any language that
answers discovery, docs/protocol.md) and per hook their recent latency and error rate; for a Cedar
entry, the set's hash and how many live coordinators evaluate exactly that set. Then the live
coordinators and their log lag. Asks every worker and coordinator of the namespace on
<ns>.discover and collects replies until they stop. Then the sealer's evidence lag (log records
and seconds not yet sealed, last sealed seq, whether a sealer holds the lease) and the audit
indexer's lag, each only when that component exists ("no sealer" / "no indexer" otherwise).

Exits 1 when anything is wrong, each problem with the command that fixes it: no registry applied,
a worker entry with no live worker, a Cedar set that some live coordinator has not loaded (failed,
still loading, another text, or a coordinator too old to say), no coordinator, a coordinator on an
old registry revision, a seal stream with no sealer holding the lease, an evidence lag older than
--max-seal-lag-s. 0 otherwise: scripts and health checks can use it as it is. (--check, which
asked for this before, is still accepted.)

options:
  --json      the report as JSON, on one line
  --max-seal-lag-s S   the oldest unsealed record accepted, in seconds (default 60)
  --indexer-consumer NAME   the indexer's durable consumer (default <ns>-indexer)
  --wait MS   the longest to wait for replies (default ${DISCOVERY_DEFAULTS.maxWaitMs}, max 60000)`;

export const statusCommand: Command = {
  summary: "show live workers, coordinators and problems per declared policy",
  async run(argv, out) {
    const { values } = parseCommand(argv, {
      json: { type: "boolean" },
      check: { type: "boolean" },
      wait: { type: "string" },
      "max-seal-lag-s": { type: "string" },
      "indexer-consumer": { type: "string" },
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
    const maxSealLagS =
      values["max-seal-lag-s"] === undefined ? 60 : Number(values["max-seal-lag-s"]);
    if (!Number.isFinite(maxSealLagS) || maxSealLagS < 0) {
      throw new HookbusError(
        "HOOKBUS_INVALID_ARGUMENT",
        `--max-seal-lag-s must be a number of seconds >= 0, got ${JSON.stringify(values["max-seal-lag-s"])}`,
        { argument: "max-seal-lag-s" },
      );
    }
    const nc = await connectNats({ ...values, name: "hookbus-status" });
    try {
      const report = await readStatus(nc, {
        ...(values.namespace === undefined ? {} : { namespace: values.namespace }),
        ...(maxWaitMs === undefined ? {} : { maxWaitMs }),
        ...(values["indexer-consumer"] === undefined
          ? {}
          : { indexerConsumer: values["indexer-consumer"] }),
        maxSealLagS,
      });
      if (values.json === true) out.print(JSON.stringify(report));
      else
        for (const line of [
          ...formatStatus(report),
          ...formatStops(report.stops),
          ...formatComponents(report.sealer, report.indexer),
        ])
          out.print(line);
      return report.problems.length > 0 ? 1 : 0;
    } finally {
      await nc.close();
    }
  },
};
