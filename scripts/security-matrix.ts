/**
 * Writes the permission matrix into docs/security.md (`npm run security:matrix`), from the same
 * code `hookbus auth` uses; `--check` exits 1 when the page is out of date
 * (test/unit/auth-matrix-docs.test.ts runs the same comparison).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { format, resolveConfig } from "prettier";
import { parseAuthDescription } from "../src/auth/description.js";
import {
  MATRIX_EXAMPLE,
  permissionMatrix,
  renderPermissionMatrix,
  withMatrix,
} from "../src/auth/matrix.js";

export const SECURITY_DOC = fileURLToPath(new URL("../docs/security.md", import.meta.url));

/** The page as it should be: `doc` with the current matrix, formatted as the repository's pages. */
export async function securityDocWithMatrix(doc: string): Promise<string> {
  const table = renderPermissionMatrix(permissionMatrix(parseAuthDescription(MATRIX_EXAMPLE)));
  const next = withMatrix(doc, table);
  if (next === undefined) throw new Error("docs/security.md has no permission-matrix markers");
  const config = await resolveConfig(SECURITY_DOC);
  return format(next, { ...config, filepath: SECURITY_DOC });
}

async function main(): Promise<void> {
  const doc = readFileSync(SECURITY_DOC, "utf8");
  const next = await securityDocWithMatrix(doc);
  if (next === doc) return;
  if (process.argv.includes("--check")) {
    console.error("docs/security.md: the permission matrix is stale; run npm run security:matrix");
    process.exit(1);
  }
  writeFileSync(SECURITY_DOC, next);
  console.log("docs/security.md: permission matrix rewritten");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
