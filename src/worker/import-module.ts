/**
 * Importing a policy module by absolute path. JavaScript (.js/.mjs/.cjs) goes through Node's own
 * import(); TypeScript (.ts/.mts/.cts) through tsx's programmatic API, the one place hookbus needs
 * a loader. tsImport registers tsx for that import only (a namespaced loader), so it works in ESM
 * and CommonJS projects alike and leaves the rest of the process untouched.
 */
import { extname } from "node:path";
import { pathToFileURL } from "node:url";

const TYPESCRIPT = new Set([".ts", ".mts", ".cts", ".tsx"]);

export async function importModule(absolutePath: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(absolutePath).href;
  if (!TYPESCRIPT.has(extname(absolutePath))) return (await import(url)) as Record<string, unknown>;
  const { tsImport } = await import("tsx/esm/api");
  return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
}
