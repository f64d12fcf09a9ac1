/** `hookbus registry apply FILE` and `hookbus registry show`. */
import { readFile } from "node:fs/promises";
import { Subjects } from "../../bus/subjects.js";
import { HookbusError } from "../../errors.js";
import { RegistryStore } from "../../registry/store.js";
import type { RegistrySnapshot } from "../../registry/snapshot.js";
import { connectNats, type ConnectionFlags } from "../connect.js";
import type { Output } from "../output.js";

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

export async function registryCommand(
  args: string[],
  flags: ConnectionFlags & { namespace?: string | undefined; json?: boolean | undefined },
  out: Output,
): Promise<number> {
  const [action, file] = args;
  if (action !== "apply" && action !== "show") {
    out.error("usage: hookbus registry apply FILE | hookbus registry show [--json]");
    return 2;
  }
  if (action === "apply" && file === undefined) {
    out.error("usage: hookbus registry apply FILE");
    return 2;
  }
  const document = action === "apply" ? await readRegistryFile(file!) : undefined;
  const nc = await connectNats(flags);
  try {
    const store = await RegistryStore.open(nc, new Subjects(flags.namespace));
    const snapshot = action === "apply" ? await store.apply(document, file) : await store.current();
    if (flags.json === true)
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
}
