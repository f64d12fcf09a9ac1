/** The `hookbus` command line: `hookbus <command> [args] [options]`. Each command parses its own options. */
import { HOOKBUS_VERSION } from "../observability/version.js";
import { isHookbusError, type HookbusError } from "../foundation/errors.js";
import { commands } from "./commands/index.js";
import { describeUncoded } from "../foundation/failure.js";
import { unsupportedNode } from "../foundation/runtime.js";
import { consoleOutput, exitQuietlyOnClosedStdout, type Output } from "./output.js";

function usage(): string {
  const rows = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(12)} ${c.summary}`);
  return [
    "usage: hookbus <command> [options]   (hookbus <command> --help for its options)",
    "",
    "commands:",
    ...rows,
    "",
    "every command takes --server URL (env NATS_URL, default nats://127.0.0.1:4222), --creds FILE",
    "(env NATS_CREDS) and --namespace NS (env HOOKBUS_NAMESPACE, default hookbus);",
    "--debug (or HOOKBUS_DEBUG=1) prints stack traces of errors; --version prints the version",
  ].join("\n");
}

/** Exit status of usage mistakes (unknown command or option), as parseArgs-style tools use. */
const USAGE_EXIT = 2;

function isParseArgsError(error: unknown): error is TypeError & { code: string } {
  return (
    error instanceof TypeError &&
    (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS") === true
  );
}

export async function main(argv: string[], out: Output = consoleOutput): Promise<number> {
  if (out === consoleOutput) exitQuietlyOnClosedStdout();
  const refusal = unsupportedNode();
  if (refusal !== undefined) {
    out.error(`${refusal.code}: ${refusal.message}`);
    return USAGE_EXIT;
  }
  const debug = argv.includes("--debug") || process.env.HOOKBUS_DEBUG === "1";
  const [name, ...rest] = argv.filter((arg) => arg !== "--debug");
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    out.print(usage());
    return name === undefined ? USAGE_EXIT : 0;
  }
  if (name === "--version" || name === "-V" || name === "version") {
    out.print(HOOKBUS_VERSION);
    return 0;
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (command === undefined) {
    out.error(
      `HOOKBUS_USAGE: unknown command ${JSON.stringify(name)}: use one of ${Object.keys(commands).join(", ")} (hookbus --help)`,
    );
    return USAGE_EXIT;
  }
  try {
    return await command.run(rest, out);
  } catch (error) {
    if (isParseArgsError(error)) {
      // parseArgs explains the mistake in one sentence; the fix is the command's help.
      const message = error.message.split("\n")[0]!.replace(/\. To specify a positional.*$/, "");
      out.error(`HOOKBUS_USAGE: ${message} (hookbus ${name} --help)`);
      return USAGE_EXIT;
    }
    const coded = isHookbusError(error) ? error : describeUncoded(error);
    out.error(`${coded.code}: ${coded.message}`);
    if (debug) out.error(stackOf(coded));
    return isHookbusError(error, "HOOKBUS_USAGE") ? USAGE_EXIT : 1;
  }
}

/** The stack of an error and of its causes, for --debug. */
function stackOf(error: HookbusError): string {
  const parts: string[] = [];
  let current: Error | undefined = error;
  for (let depth = 0; current !== undefined && depth < 5; depth++) {
    parts.push(current.stack ?? current.message);
    current = current.cause instanceof Error ? current.cause : undefined;
  }
  return parts.join("\ncaused by: ");
}
