/**
 * `hookbus/openai-agents` needs no code of `@openai/agents` at run time (it imports the SDK's
 * types only), so importing it without the optional peer installed works; there is no load to
 * fail with HOOKBUS_MISSING_PEER. Proven in a child process where a module hook makes every
 * `@openai/*` import fail as if the package were not installed.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startChild } from "../../support/child.js";

const adapter = fileURLToPath(
  new URL("../../../src/adapters/openai-agents/index.ts", import.meta.url),
);

const hideSdk = `export async function resolve(specifier, context, next) {
  if (specifier.startsWith("@openai/")) {
    const error = new Error("Cannot find package '" + specifier + "' (hidden by the test)");
    error.code = "ERR_MODULE_NOT_FOUND";
    throw error;
  }
  return next(specifier, context);
}`;
const register = `import { register } from "node:module";
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hideSdk)}`)});`;

const script = `
const sdk = await import("@openai/agents").then(() => "loaded", (e) => e.code);
const { hookbusModel, hookbusTools } = await import(${JSON.stringify(adapter)});
const model = hookbusModel({ getResponse: async () => ({}), getStreamedResponse: async function* () {} });
console.log(JSON.stringify({ sdk, model: typeof model.getResponse, tools: hookbusTools([]).length }));
`;

describe("hookbus/openai-agents without @openai/agents installed", () => {
  it("loads and wraps: the adapter imports only the SDK's types", async () => {
    const child = startChild(
      [
        "--import",
        "tsx",
        "--import",
        `data:text/javascript,${encodeURIComponent(register)}`,
        "--input-type=module",
        "-e",
        script,
      ],
      {},
    );
    expect(await child.exited, child.errors()).toBe(0);
    expect(JSON.parse(child.output())).toEqual({
      sdk: "ERR_MODULE_NOT_FOUND",
      model: "function",
      tools: 0,
    });
  }, 60_000);
});
