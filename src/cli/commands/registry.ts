/** `hookbus registry apply FILE` and `hookbus registry show`. */
import { readFile } from "node:fs/promises";
import { Subjects } from "../../bus/subjects.js";
import { HookbusError } from "../../errors.js";
import { RegistryStore } from "../../registry/store.js";
import type { RegistrySnapshot } from "../../registry/snapshot.js";
import { parseCommand, type Command } from "../command.js";
import { connectNats } from "../connect.js";

export async function readRegistryFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new HookbusError(
      "HOOKBUS_INVALID_REGISTRY",
      `cannot read ${path}: ${(error as Error).message}`,
      {},
      error,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new HookbusError(
      "HOOKBUS_INVALID_REGISTRY",
      `${path} is not valid JSON: ${(error as Error).message}`,
      {},
      error,
    );
  }
}

export function formatSnapshot(snapshot: RegistrySnapshot): string {
  const rows = snapshot.document.policies.map((p) => [
    p.name,
    String(p.priority),
    p.mode,
    p.failMode ?? "(hook default)",
    `${p.timeoutMs}ms`,
    p.hooks.join(","),
  ]);
  const header = ["policy", "priority", "mode", "failMode", "timeout", "hooks"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [`registry revision ${snapshot.revision}`, line(header), ...rows.map(line)].join("\n");
}

const HELP = `usage: hookbus registry apply FILE [--json]
       hookbus registry show [--json]

apply   validate a policy set (JSON, schemas/registry.schema.json) and store it as the next
        registry revision; every mistake is reported with its path and nothing is stored
show    print the policy set in force and its revision`;

export const registryCommand: Command = {
  summary: "apply a policy set from a file, or show the one in force",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, { json: { type: "boolean" } });
    const [action, file, ...extra] = positionals;
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    if (
      (action !== "apply" && action !== "show") ||
      (action === "apply" && file === undefined) ||
      extra.length > 0
    ) {
      out.error(HELP);
      return 2;
    }
    const document = action === "apply" ? await readRegistryFile(file!) : undefined;
    const nc = await connectNats(values);
    try {
      const store = await RegistryStore.open(nc, new Subjects(values.namespace));
      const snapshot =
        action === "apply" ? await store.apply(document, file) : await store.current();
      if (values.json === true)
        out.print(JSON.stringify({ revision: snapshot.revision, ...snapshot.document }, null, 2));
      else if (action === "apply")
        out.print(
          `applied ${file}: ${snapshot.document.policies.length} policies, revision ${snapshot.revision}`,
        );
      else out.print(formatSnapshot(snapshot));
      return 0;
    } finally {
      await nc.drain();
    }
  },
};
