/**
 * `source` of a cedar policy, read when a registry file is: the stored document carries the
 * policy set's text, so every coordinator evaluates the same bytes the operator applied (a
 * coordinator never reads the operator's disk), and changing the .cedar file changes the
 * registry document (a new revision, `registry diff` shows it).
 */
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { HookbusError, type ValidationIssue } from "../foundation/errors.js";

/** A Cedar file larger than this is refused (the whole registry must fit one KV value). */
export const MAX_CEDAR_FILE_BYTES = 512 * 1024;

/** The document with each cedar entry's `source` read into `cedar`; `registryPath` anchors relative paths. */
export async function inlineCedarSources(raw: unknown, registryPath: string): Promise<unknown> {
  const policies = (raw as { policies?: unknown } | null)?.policies;
  if (!Array.isArray(policies)) return raw;
  const issues: ValidationIssue[] = [];
  const inlined = await Promise.all(
    policies.map(async (entry: unknown, index) => {
      const p = entry as { kind?: unknown; source?: unknown; cedar?: unknown } | null;
      if (p?.kind !== "cedar" || typeof p.source !== "string" || p.cedar !== undefined)
        return entry;
      const path = resolve(dirname(registryPath), p.source);
      try {
        const text = await readFile(path, "utf8");
        if (Buffer.byteLength(text) > MAX_CEDAR_FILE_BYTES)
          throw new Error(`larger than ${MAX_CEDAR_FILE_BYTES} bytes`);
        return { ...p, cedar: text };
      } catch (error) {
        issues.push({
          path: `policies.${index}.source`,
          rule: "cedar_source",
          message: `cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`,
        });
        return entry;
      }
    }),
  );
  if (issues.length > 0) {
    const list = issues.map((i) => `  ${i.path}: ${i.message}`).join("\n");
    throw new HookbusError("HOOKBUS_INVALID_REGISTRY", `${registryPath} is invalid:\n${list}`, {
      issues,
    });
  }
  return { ...(raw as object), policies: inlined };
}
