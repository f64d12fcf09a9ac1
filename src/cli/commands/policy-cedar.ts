/** `hookbus policy schema --cedar` and `hookbus policy validate FILE...` (docs/cedar.md). */
import { readFile } from "node:fs/promises";
import { checkCedarEntries } from "../../cedar/check.js";
import { cedarSchema } from "../../cedar/validate.js";
import { cedarVersion } from "../../cedar/wasm.js";
import { HookbusError } from "../../foundation/errors.js";
import { unreadableFile } from "../../foundation/failure.js";
import { MAX_CEDAR_FILE_BYTES } from "../../registry/cedar-source.js";
import type { Output } from "../output.js";
import { checkedRegistryDocument, readRegistryFile } from "./registry.js";

export function printCedarSchema(cedar: boolean, out: Output): number {
  if (!cedar)
    throw new HookbusError(
      "HOOKBUS_USAGE",
      "hookbus policy schema takes --cedar (the only format)",
    );
  out.print(`// Cedar ${cedarVersion()}\n${cedarSchema()}`);
  return 0;
}

/**
 * Each file parsed and type-checked: a `.cedar` file as one policy set, any other file as a
 * registry document whose Cedar policies are checked. Every file is checked before the first
 * problem is reported; a refusal is HOOKBUS_INVALID_CEDAR (or HOOKBUS_INVALID_REGISTRY).
 */
export async function validateCedarFiles(
  files: readonly string[],
  json: boolean,
  out: Output,
): Promise<number> {
  const failures: HookbusError[] = [];
  for (const file of files) {
    try {
      const cedar = file.endsWith(".cedar");
      const count = cedar ? await checkCedarFile(file) : await checkRegistry(file);
      const what = cedar ? "Cedar policies" : "Cedar policy sets";
      out.print(
        json
          ? JSON.stringify({ file, valid: true, [cedar ? "policies" : "cedarSets"]: count })
          : `${file} is valid: ${count} ${what}`,
      );
    } catch (error) {
      if (!(error instanceof HookbusError)) throw error;
      failures.push(error);
      if (json) out.print(JSON.stringify({ file, valid: false, error: error.toJSON() }));
    }
  }
  if (failures.length === 0) return 0;
  if (json) return 1;
  throw failures.length === 1
    ? failures[0]!
    : new HookbusError(failures[0]!.code, failures.map((f) => f.message).join("\n"), {
        issues: failures.flatMap((f) => f.details.issues ?? []),
      });
}

async function checkCedarFile(path: string): Promise<number> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw unreadableFile(path, "Cedar file", error, "HOOKBUS_INVALID_CEDAR");
  }
  if (Buffer.byteLength(text) > MAX_CEDAR_FILE_BYTES)
    throw new HookbusError(
      "HOOKBUS_INVALID_CEDAR",
      `${path} is larger than ${MAX_CEDAR_FILE_BYTES} bytes`,
    );
  const sets = checkCedarEntries([{ name: path, cedar: text, source: path }]);
  return [...sets.values()].reduce((n, set) => n + set.policies.size, 0);
}

async function checkRegistry(path: string): Promise<number> {
  const document = checkedRegistryDocument(await readRegistryFile(path), path);
  return document.policies.filter((p) => p.kind === "cedar").length;
}
