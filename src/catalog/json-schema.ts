/**
 * JSON Schema documents generated from the zod schemas (see `src/contract/schemas.ts` for the full
 * list that `npm run schemas` writes).
 */
import { z } from "zod";
import { catalog, HOOK_NAMES } from "./catalog.js";

const SCHEMA_BASE = "https://hookbus.dev/schemas/";

export function toJsonSchemaDocument(
  id: string,
  schema: z.ZodType,
  title: string,
): Record<string, unknown> {
  // What crosses the wire is what a sender must produce, so describe the input side.
  const json = z.toJSONSchema(schema, {
    io: "input",
    unrepresentable: "any",
    target: "draft-2020-12",
  });
  return { $id: `${SCHEMA_BASE}${id}`, title, ...json };
}

/** Relative path under `schemas/` → JSON Schema document, for every hook and kind. */
export function hookSchemaDocuments(): Map<string, Record<string, unknown>> {
  const files = new Map<string, Record<string, unknown>>();
  for (const hook of HOOK_NAMES) {
    const spec = catalog[hook];
    const kinds: Array<[string, z.ZodType]> = [
      ["event", spec.event],
      ["context", spec.context],
    ];
    if (spec.kind === "modifying")
      kinds.push(["verdict", spec.verdict], ["decision", spec.decision]);
    for (const [kind, schema] of kinds) {
      const path = `hooks/${hook}.${kind}.schema.json`;
      files.set(path, toJsonSchemaDocument(path, schema, `${hook} ${kind}`));
    }
  }
  return files;
}
