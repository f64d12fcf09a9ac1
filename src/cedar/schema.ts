/**
 * The Cedar schema of hookbus requests, generated from the hook catalog: one action per modifying
 * hook, with the context request.ts builds for it. `hookbus policy schema --cedar` prints it;
 * Cedar's validator checks policies against it, so a policy that reads a field its hook does not
 * have is refused before it runs (validate.ts).
 */
import { MODIFYING_HOOK_NAMES, type ModifyingHookName } from "../catalog/catalog.js";
import { TOOL_CLASSES } from "../vocabulary/classes.js";
import { factsSchemaTypes } from "./action-context.js";

/** Each hook's resources and its own context fields (besides the common ones). */
const HOOK_SHAPES: Record<ModifyingHookName, { resources: string; fields: string[] }> = {
  before_agent_reply: { resources: "Session", fields: ["cleanedBody: String"] },
  before_llm_call: {
    resources: "Tool, Session",
    fields: ["model?: String", "iteration?: Long", "toolNames: Set<String>"],
  },
  after_llm_call: {
    resources: "Tool, Session",
    fields: [
      "model?: String",
      "iteration?: Long",
      "toolNames: Set<String>",
      "call?: Call",
      "facts?: Facts",
    ],
  },
  before_tool_call: { resources: "Tool", fields: ["call: Call", "facts: Facts"] },
  before_tool_result: {
    resources: "Tool",
    fields: [
      "call: Call",
      "facts: Facts",
      "isError: Bool",
      "resultText: String",
      "resultSecrets: Set<String>",
    ],
  },
  before_response_emit: {
    resources: "Session",
    fields: ["content: String", "allContent: Set<String>", "contentSecrets: Set<String>"],
  },
};

const COMMON_FIELDS = [
  "agentId: String",
  "sessionKey: String",
  "runId?: String",
  "channel?: String",
  "session: SessionFacts",
];

function record(fields: readonly string[], indent: string): string {
  return `{\n${fields.map((f) => `${indent}  ${f},`).join("\n")}\n${indent}}`;
}

/** The schema, in Cedar's schema syntax. */
export function cedarSchemaText(): string {
  const counts = TOOL_CLASSES.map((c) => `"${c}": Long`);
  const actions = MODIFYING_HOOK_NAMES.map((hook) => {
    const shape = HOOK_SHAPES[hook];
    const context = record([...COMMON_FIELDS, ...shape.fields], "  ");
    return `action ${hook} appliesTo {\n  principal: Agent,\n  resource: [${shape.resources}],\n  context: ${context}\n};`;
  });
  return [
    "// The Cedar schema of hookbus requests (hookbus policy schema --cedar). docs/cedar.md",
    "entity Agent;",
    "entity Session;",
    `entity Tool ${record(["name: String", "class: String", "server?: String"], "")};`,
    `type Url = ${record(["href: String", "scheme: String", "host: String"], "")};`,
    `type Call = ${record(
      [
        "id?: String",
        "command?: String",
        "url?: Url",
        "paths: Set<String>",
        "recipients: Set<String>",
        "query?: String",
        "paramsText: String",
        "secrets: Set<String>",
      ],
      "",
    )};`,
    ...Object.entries(factsSchemaTypes()).map(
      ([name, fields]) => `type ${name} = ${record(fields, "")};`,
    ),
    `type ClassCounts = ${record(counts, "")};`,
    `type SessionFacts = ${record(
      [
        "toolCalls: Long",
        "toolsCalled: Set<String>",
        "classesCalled: Set<String>",
        "classCounts: ClassCounts",
        "taint: Set<String>",
      ],
      "",
    )};`,
    ...actions,
    "",
  ].join("\n");
}
