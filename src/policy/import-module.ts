/**
 * Importing a policy module by absolute path. JavaScript (.js/.mjs/.cjs) goes through Node's own
 * import(); TypeScript through tsx's programmatic API, the one place hookbus needs a loader. The
 * module's format follows Node's rules (.mts ES module, .cts CommonJS, .ts/.tsx by the nearest
 * package.json "type"). An ES module goes through tsImport, which registers tsx for that import
 * only. A CommonJS TypeScript module is refused with a coded error saying what to change: tsx's
 * CommonJS path re-compiles hookbus's own ES modules into a second, broken copy (pino fails inside
 * it), and require() of hookbus from a module that import() loaded is a cycle Node refuses.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, extname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { HookbusError } from "../foundation/errors.js";

type ModuleFormat = "module" | "commonjs";

const TYPESCRIPT: Record<string, ModuleFormat | "package"> = {
  ".mts": "module",
  ".cts": "commonjs",
  ".ts": "package",
  ".tsx": "package",
};

/** A bound on the walk up to the file system root. */
const MAX_DEPTH = 64;

/** The "type" of the nearest package.json above `file` (Node's default: commonjs). */
function packageFormat(file: string): ModuleFormat {
  let dir = dirname(file);
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      const type = (JSON.parse(readFileSync(manifest, "utf8")) as { type?: unknown }).type;
      return type === "module" ? "module" : "commonjs";
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return "commonjs";
}

export async function importModule(absolutePath: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(absolutePath).href;
  const kind = TYPESCRIPT[extname(absolutePath)];
  if (kind === undefined) return (await import(url)) as Record<string, unknown>;
  const format = kind === "package" ? packageFormat(absolutePath) : kind;
  if (format === "commonjs") {
    throw new HookbusError(
      "HOOKBUS_INVALID_POLICY",
      `${absolutePath} is a CommonJS TypeScript module, which hookbus cannot load: rename it to .mts, ` +
        `or set "type": "module" in its package.json (or compile it to JavaScript)`,
      { path: absolutePath, format },
    );
  }
  const { tsImport } = await import("tsx/esm/api");
  return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
}
