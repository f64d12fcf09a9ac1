/** What a CLI command is, and the options every command shares. */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { Subjects } from "../bus/subjects.js";
import type { ConnectionFlags } from "../bus/connect.js";
import type { Output } from "./output.js";

export interface Command {
  /** One line for `hookbus --help`. */
  summary: string;
  /** Runs with the arguments after the command name; resolves to the exit code. */
  run(argv: string[], out: Output): Promise<number>;
}

type Options = NonNullable<ParseArgsConfig["options"]>;

export const commonOptions = {
  server: { type: "string" },
  creds: { type: "string" },
  nkey: { type: "string" },
  "inbox-prefix": { type: "string" },
  namespace: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies Options;

export interface CommonFlags extends ConnectionFlags {
  namespace?: string | undefined;
  help?: boolean | undefined;
}

type Parsed<O extends Options> = ReturnType<
  typeof parseArgs<{
    args: string[];
    allowPositionals: true;
    strict: true;
    options: typeof commonOptions & O;
  }>
>;

/** parseArgs with the common options added, and the namespace defaulted from the environment. */
export function parseCommand<const O extends Options>(
  argv: string[],
  options: O,
): { values: Parsed<O>["values"] & CommonFlags; positionals: string[] } {
  const parsed = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { ...commonOptions, ...options },
  });
  const values = parsed.values as typeof parsed.values & CommonFlags;
  values.namespace ??= process.env.HOOKBUS_NAMESPACE;
  // A bad namespace is reported before anything connects (or loads, or waits for NATS).
  if (values.namespace !== undefined) new Subjects(values.namespace);
  return { values, positionals: parsed.positionals };
}

/** A repeatable, comma-separated flag (`--policies a.ts,b.ts --policies c.ts`) as one list. */
export function commaList(values: string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter((v) => v !== "");
}
