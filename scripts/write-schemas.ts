/** Writes the JSON Schema contract to schemas/ (npm run schemas). */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildJsonSchemas, serializeSchema } from "../src/contract/schemas.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "schemas");
rmSync(root, { recursive: true, force: true });
const files = buildJsonSchemas();
for (const [path, doc] of files) {
  const target = join(root, path);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, serializeSchema(doc));
}
console.log(`wrote ${files.size} schemas to ${root}`);
