/** The `hookbus` command line. */
import { parseArgs } from "node:util";
import { isHookbusError } from "../errors.js";
import { coordinatorCommand } from "./commands/coordinator.js";
import { registryCommand } from "./commands/registry.js";
import { consoleOutput, type Output } from "./output.js";

const USAGE = `usage: hookbus <command> [options]

commands:
  registry apply FILE     validate a policy set (JSON) and store it as the next registry revision
  registry show           print the registry in force (--json for the document)
  coordinator             run a coordinator until SIGTERM/SIGINT

options:
  --server URL            NATS server(s), comma separated (env NATS_URL, default nats://127.0.0.1:4222)
  --creds FILE            NATS credentials file (env NATS_CREDS)
  --namespace NS          subject namespace (env HOOKBUS_NAMESPACE, default hookbus)
  --json                  machine-readable output
  --log-level LEVEL       coordinator log level (env LOG_LEVEL, default info)
  --log-max-age MS        log stream max age when creating it (env HOOKBUS_LOG_MAX_AGE_MS, 0 = forever)
  --log-max-bytes N       log stream size cap when creating it (env HOOKBUS_LOG_MAX_BYTES, -1 = none)
  --id NAME               coordinator name in records and logs`;

export async function main(argv: string[], out: Output = consoleOutput): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      server: { type: "string" },
      creds: { type: "string" },
      namespace: { type: "string" },
      json: { type: "boolean" },
      "log-level": { type: "string" },
      "log-max-age": { type: "string" },
      "log-max-bytes": { type: "string" },
      id: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const flags = { ...values, namespace: values.namespace ?? process.env.HOOKBUS_NAMESPACE };
  const [command, ...rest] = positionals;
  if (values.help === true || command === undefined) {
    out.print(USAGE);
    return command === undefined && values.help !== true ? 2 : 0;
  }
  try {
    switch (command) {
      case "registry":
        return await registryCommand(rest, flags, out);
      case "coordinator":
        return await coordinatorCommand(flags);
      default:
        out.error(`unknown command "${command}"\n${USAGE}`);
        return 2;
    }
  } catch (error) {
    if (isHookbusError(error)) {
      out.error(`${error.code}: ${error.message}`);
      return 1;
    }
    throw error;
  }
}
