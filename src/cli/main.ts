/** The `hookbus` command line: `hookbus <command> [args] [options]`. Each command parses its own options. */
import { isHookbusError } from "../errors.js";
import { commands } from "./commands/index.js";
import { consoleOutput, type Output } from "./output.js";

function usage(): string {
  const rows = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(12)} ${c.summary}`);
  return [
    "usage: hookbus <command> [options]   (hookbus <command> --help for its options)",
    "",
    "commands:",
    ...rows,
    "",
    "every command takes --server URL (env NATS_URL, default nats://127.0.0.1:4222), --creds FILE",
    "(env NATS_CREDS) and --namespace NS (env HOOKBUS_NAMESPACE, default hookbus)",
  ].join("\n");
}

export async function main(argv: string[], out: Output = consoleOutput): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    out.print(usage());
    return name === undefined ? 2 : 0;
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (command === undefined) {
    out.error(`unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  try {
    return await command.run(rest, out);
  } catch (error) {
    if (isHookbusError(error)) {
      out.error(`${error.code}: ${error.message}`);
      return 1;
    }
    if (
      error instanceof TypeError &&
      (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")
    ) {
      out.error(`${error.message}\n(hookbus ${name} --help)`);
      return 2;
    }
    throw error;
  }
}
