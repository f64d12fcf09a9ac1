/**
 * schemas/ is the wire contract for policy workers written in other languages. It is generated
 * from the zod schemas (npm run schemas) and checked in; this test fails when the two drift, and
 * checks that the JSON Schemas describe what zod accepts.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  HOOK_NAMES,
  MODIFYING_HOOK_NAMES,
  OBSERVATIONAL_HOOK_NAMES,
  parseContext,
  parseDecision,
  parseEvent,
  parseVerdict,
  type HookName,
  type ModifyingHookName,
} from "../../../src/index.js";
import { buildJsonSchemas, serializeSchema } from "../../../src/contract/schemas.js";
import { ANNOTATION_KEYWORDS, checkSchema } from "../../support/json-schema.js";

const SCHEMAS_DIR = fileURLToPath(new URL("../../../schemas/", import.meta.url));
const REGENERATE = "Run `npm run schemas` and commit the result.";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonSchema = { [key: string]: Json };

function listSchemaFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...listSchemaFiles(full));
    else if (name.endsWith(".schema.json"))
      out.push(relative(SCHEMAS_DIR, full).split(sep).join("/"));
  }
  return out;
}

function readSchema(path: string): JsonSchema {
  return JSON.parse(readFileSync(join(SCHEMAS_DIR, path), "utf8")) as JsonSchema;
}

const generated = buildJsonSchemas();

describe("schemas/ matches the zod schemas (drift)", () => {
  it("every generated schema is checked in, byte for byte", () => {
    const problems: string[] = [];
    for (const [path, doc] of generated) {
      let onDisk: string;
      try {
        onDisk = readFileSync(join(SCHEMAS_DIR, path), "utf8");
      } catch {
        problems.push(`schemas/${path} is missing`);
        continue;
      }
      if (onDisk !== serializeSchema(doc)) problems.push(`schemas/${path} is out of date`);
    }
    expect(
      problems,
      `The checked-in JSON Schemas differ from the zod schemas in src/. ${REGENERATE}`,
    ).toEqual([]);
  });

  it("schemas/ holds no schema that is no longer generated", () => {
    const extra = listSchemaFiles(SCHEMAS_DIR).filter((path) => !generated.has(path));
    expect(
      extra.map((p) => `schemas/${p}`),
      `These files are not generated from src/ any more. ${REGENERATE}`,
    ).toEqual([]);
  });

  it("generation is deterministic", () => {
    const again = buildJsonSchemas();
    expect([...again.keys()]).toEqual([...generated.keys()]);
    for (const [path, doc] of again)
      expect(serializeSchema(doc)).toBe(serializeSchema(generated.get(path)!));
  });
});

describe("the hook schema files", () => {
  it("exist for every hook and kind: 6 modifying × 4 + 6 observational × 2", () => {
    const expected = [
      ...MODIFYING_HOOK_NAMES.flatMap((h) =>
        ["event", "context", "verdict", "decision"].map((k) => `hooks/${h}.${k}.schema.json`),
      ),
      ...OBSERVATIONAL_HOOK_NAMES.flatMap((h) =>
        ["event", "context"].map((k) => `hooks/${h}.${k}.schema.json`),
      ),
    ];
    expect(expected).toHaveLength(36);
    const onDisk = listSchemaFiles(SCHEMAS_DIR).filter((p) => p.startsWith("hooks/"));
    expect(onDisk.sort()).toEqual([...expected].sort());
    expect(listSchemaFiles(SCHEMAS_DIR)).toContain("policy-outcome.schema.json");
  });

  it("each carries a stable $id, a title and the draft 2020-12 dialect", () => {
    for (const path of listSchemaFiles(SCHEMAS_DIR)) {
      const doc = readSchema(path);
      expect(doc.$id, path).toBe(`https://hookbus.dev/schemas/${path}`);
      expect(typeof doc.title, path).toBe("string");
      expect(doc.$schema, path).toBe("https://json-schema.org/draft/2020-12/schema");
    }
  });

  it.each(MODIFYING_HOOK_NAMES)("%s: verdict and decision forbid unknown fields", (hook) => {
    for (const kind of ["verdict", "decision"]) {
      const doc = readSchema(`hooks/${hook}.${kind}.schema.json`);
      expect(doc.type, kind).toBe("object");
      expect(doc.additionalProperties, `${hook} ${kind}`).toBe(false);
    }
  });

  it.each(HOOK_NAMES)("%s: event and context allow unknown fields", (hook) => {
    for (const kind of ["event", "context"]) {
      const doc = readSchema(`hooks/${hook}.${kind}.schema.json`);
      expect(doc.type, kind).toBe("object");
      expect(doc.additionalProperties, `${hook} ${kind}`).not.toBe(false);
    }
  });

  it.each(HOOK_NAMES)(
    "%s: context requires agentId and sessionKey; runId is optional (issue 13: the session is the run without one)",
    (hook) => {
      const doc = readSchema(`hooks/${hook}.context.schema.json`);
      const required = doc.required as string[];
      expect(required).toEqual(expect.arrayContaining(["agentId", "sessionKey"]));
      expect(required.includes("runId"), hook).toBe(false);
      expect((doc.properties as Record<string, Json>).runId, hook).toBeDefined();
    },
  );

  it("verdict schemas list exactly the fields of the design table", () => {
    const fields: Record<ModifyingHookName, string[]> = {
      before_agent_reply: ["reply", "reason"],
      before_llm_call: ["messages", "systemPrompt", "tools", "block", "blockReason"],
      after_llm_call: ["toolCalls", "block", "blockReason"],
      before_tool_call: ["params", "requireApproval", "block", "blockReason"],
      before_tool_result: ["content", "block", "blockReason"],
      before_response_emit: ["content", "allContent", "block", "blockReason"],
    };
    for (const hook of MODIFYING_HOOK_NAMES) {
      const doc = readSchema(`hooks/${hook}.verdict.schema.json`);
      const properties = doc.properties as Record<string, Json>;
      expect(Object.keys(properties).sort(), hook).toEqual([...fields[hook]].sort());
      expect(doc.required, hook).toBeUndefined();
    }
  });
});

// --- Conformance: the JSON Schema accepts what zod accepts, and rejects what zod rejects -------
//
// There is no JSON Schema validator among the dependencies, so this uses the minimal one of the
// tests (test/support/json-schema.ts), limited to the keywords the generated files use. It throws
// on any other keyword, so that a schema feature it does not understand can never make this test
// pass by accident.

const KNOWN = [
  ...ANNOTATION_KEYWORDS,
  "$ref",
  "type",
  "properties",
  "required",
  "additionalProperties",
  "propertyNames",
  "items",
  "anyOf",
  "enum",
  "const",
  "minLength",
  "minimum",
  "maximum",
];

function validate(schema: Json, value: unknown, root: JsonSchema): boolean {
  return checkSchema(schema, value, root, KNOWN).length === 0;
}

function accepts(path: string, value: unknown): boolean {
  const doc = readSchema(path);
  return validate(doc, value, doc);
}

function zodAccepts(fn: () => unknown): boolean {
  try {
    fn();
    return true;
  } catch {
    return false;
  }
}

const context = { agentId: "a", sessionKey: "s", runId: "r" };

const eventSamples: Array<[HookName, unknown]> = [
  [
    "before_llm_call",
    {
      messages: [
        {
          role: "user",
          content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }],
        },
        { role: "model", parts: [{ text: "x" }] },
      ],
      tools: [
        { type: "function", function: { name: "f", parameters: {} } },
        { name: "g", input_schema: {} },
      ],
      iteration: 0,
      extra: true,
    },
  ],
  ["before_llm_call", { messages: [{ content: "no role" }] }],
  ["before_llm_call", { messages: [{ role: "" }] }],
  ["before_llm_call", { messages: [], iteration: 1.5 }],
  ["before_llm_call", { messages: [], iteration: -1 }],
  ["before_llm_call", { messages: [], tools: [{ description: "no name" }] }],
  ["before_llm_call", { messages: [{ role: "user", content: [{ text: "no type" }] }] }],
  ["before_llm_call", { tools: [] }],
  [
    "after_llm_call",
    {
      toolCalls: [
        { name: "f", args: {} },
        { id: "x", name: "g", input: {} },
      ],
    },
  ],
  ["after_llm_call", { toolCalls: [{ id: "c", type: "function", function: { name: "f" } }] }],
  ["after_llm_call", { toolCalls: [{ id: "c", type: "other", function: { name: "f" } }] }],
  ["after_llm_call", { toolCalls: [{ name: "f", arguments: 3 }] }],
  ["after_llm_call", { toolCalls: [], response: { role: "assistant", content: "x" } }],
  ["after_llm_call", { toolCalls: [], response: 3 }],
  ["before_tool_call", { toolName: "t", params: { a: 1 }, toolCallId: "c", x: 1 }],
  ["before_tool_call", { toolName: "", params: {} }],
  ["before_tool_call", { toolName: "t", params: [] }],
  ["before_tool_result", { toolName: "t", params: {}, result: { any: "thing" }, isError: false }],
  ["before_tool_result", { toolName: "t", params: {}, result: null, isError: "no" }],
  ["before_response_emit", { content: "x", allContent: ["x"], messageCount: 2 }],
  ["before_response_emit", { content: "x", allContent: [1] }],
  ["before_agent_reply", { cleanedBody: "" }],
  ["before_agent_reply", {}],
  ["after_tool_call", { toolName: "t", params: {}, blocked: true, durationMs: 0.5 }],
  ["after_tool_call", { toolName: "t", params: {}, durationMs: -1 }],
  ["llm_output", { usage: { input: 1, custom: "x" } }],
  ["session_start", {}],
  ["agent_end", { success: false, error: "boom" }],
  ["agent_end", { success: "no" }],
];

const contextSamples: Array<[HookName, unknown]> = [
  ["before_tool_call", { ...context, toolName: "t", tenant: "acme" }],
  ["before_tool_call", { ...context, toolCallId: 1 }],
  ["before_llm_call", { agentId: "a", sessionKey: "s" }],
  ["session_start", { agentId: "a", sessionKey: "s" }],
  ["session_start", { agentId: "a", sessionKey: "s", runId: "" }],
  ["session_end", { agentId: "", sessionKey: "s" }],
  ["llm_input", { ...context, traceId: 3 }],
];

const verdictSamples: Array<[ModifyingHookName, unknown]> = [
  ["before_agent_reply", { reply: { text: "x", extra: 1 }, reason: "r" }],
  ["before_agent_reply", { reply: { text: "x" }, block: true }],
  ["before_agent_reply", { reply: {} }],
  ["before_llm_call", { messages: [], systemPrompt: "", tools: [{ name: "f" }], block: false }],
  ["before_llm_call", { tools: [{}] }],
  ["before_llm_call", { toolCalls: [] }],
  ["after_llm_call", { toolCalls: [{ id: "c", name: "f" }, {}] }],
  ["after_llm_call", { toolCalls: [{ id: 1 }] }],
  ["after_llm_call", { tools: [] }],
  ["before_tool_call", { params: { a: 1 }, block: true, blockReason: "r" }],
  ["before_tool_call", { content: "x" }],
  ["before_tool_call", { block: "yes" }],
  ["before_tool_result", { content: [{ type: "text", text: "x" }] }],
  ["before_tool_result", { content: [{ text: "x" }] }],
  ["before_tool_result", { content: 1 }],
  ["before_response_emit", { content: "", allContent: ["a", "b"] }],
  ["before_response_emit", { allContent: "a" }],
  ["before_response_emit", { params: {} }],
  ["before_tool_call", {}],
];

const decisionSamples: Array<[ModifyingHookName, unknown]> = [
  ["before_tool_call", { outcome: "modify", params: {}, decidedBy: { params: ["p"] } }],
  ["before_tool_call", { outcome: "deny", decidedBy: {} }],
  ["before_tool_call", { outcome: "allow" }],
  ["after_llm_call", { outcome: "allow", decidedBy: {}, toolCalls: [{ name: "f" }] }],
  ["before_agent_reply", { outcome: "reply", reply: { text: "x" }, decidedBy: { reply: ["w"] } }],
  ["before_response_emit", { outcome: "allow", decidedBy: {}, extra: 1 }],
];

describe("the JSON Schemas agree with zod on sample payloads", () => {
  it("the samples contain both accepted and rejected values", () => {
    const results = eventSamples.map(([hook, v]) => zodAccepts(() => parseEvent(hook, v)));
    expect(results).toContain(true);
    expect(results).toContain(false);
  });

  it.each(eventSamples)("%s event %j", (hook, value) => {
    expect(accepts(`hooks/${hook}.event.schema.json`, value)).toBe(
      zodAccepts(() => parseEvent(hook, value)),
    );
  });

  it.each(contextSamples)("%s context %j", (hook, value) => {
    expect(accepts(`hooks/${hook}.context.schema.json`, value)).toBe(
      zodAccepts(() => parseContext(hook, value)),
    );
  });

  it.each(verdictSamples)("%s verdict %j", (hook, value) => {
    expect(accepts(`hooks/${hook}.verdict.schema.json`, value)).toBe(
      zodAccepts(() => parseVerdict(hook, value)),
    );
  });

  it.each(decisionSamples)("%s decision %j", (hook, value) => {
    expect(accepts(`hooks/${hook}.decision.schema.json`, value)).toBe(
      zodAccepts(() => parseDecision(hook, value)),
    );
  });

  it("the validator itself rejects what it should (a sanity check of the test)", () => {
    expect(accepts("hooks/before_tool_call.verdict.schema.json", { nope: 1 })).toBe(false);
    expect(accepts("hooks/before_tool_call.event.schema.json", { toolName: "t" })).toBe(false);
    expect(() => validate({ pattern: "x" }, "x", {})).toThrow(/keyword pattern/);
  });
});
