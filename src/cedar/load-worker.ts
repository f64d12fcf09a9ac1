/**
 * The thread a coordinator parses and checks Cedar sets in (loader.ts starts it), so that the
 * engine's slowest work (splitting a set, turning each policy into JSON, type-checking, a first
 * evaluation: ~1 ms per policy) never holds the thread that decides calls. It has its own engine
 * instance: a set that traps it traps this thread's instance, which is then thrown away with the
 * thread.
 *
 * Node runs this file directly (as .js from dist/, as .ts from src/ with Node's type stripping),
 * so it imports nothing of hookbus and uses only erasable TypeScript.
 */
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";
import type * as CedarBindings from "@cedar-policy/cedar-wasm/nodejs";

const cedar = createRequire(import.meta.url)(
  "@cedar-policy/cedar-wasm/nodejs",
) as typeof CedarBindings;
const { schema, hooks } = workerData as { schema: string; hooks: string[] };

export interface LoadRequest {
  id: number;
  text: string;
}

/** What the thread found: the set split into policies (with their JSON), or why it could not. */
export type LoadReply =
  | {
      id: number;
      type: "loaded";
      policies: string[];
      /** Each policy's JSON (Cedar's answer, as is). */
      json: CedarBindings.PolicyToJsonAnswer[];
      /** Type errors by policy position (`p<N>`), Cedar's messages. */
      typeErrors: { position: number; message: string }[];
      ms: number;
    }
  | { id: number; type: "invalid"; messages: string[] }
  | { id: number; type: "trap"; message: string };

type Message = { message: string; help?: string | null };

function lines(errors: readonly Message[]): string[] {
  return errors.map((e) => (e.help ? `${e.message} (${e.help})` : e.message));
}

function typeErrorsOf(policies: string[]): { position: number; message: string }[] {
  const staticPolicies = Object.fromEntries(policies.map((text, i) => [`p${i}`, text]));
  const answer = cedar.validate({
    schema,
    policies: { staticPolicies },
    validationSettings: { mode: "strict" },
  });
  if (answer.type === "failure")
    return lines(answer.errors).map((message) => ({ position: -1, message }));
  return answer.validationErrors.map((e) => ({
    position: Number(e.policyId.slice(1)),
    message: lines([e.error])[0] ?? e.error.message,
  }));
}

/** One evaluation per hook against an empty context: a set whose evaluation traps, traps here. */
function firstEvaluation(policies: string[], id: number): string[] {
  const setId = `load:${id}`;
  const staticPolicies = Object.fromEntries(policies.map((text, i) => [`p${i}`, text]));
  const parsed = cedar.preparsePolicySet(setId, { staticPolicies });
  if (parsed.type === "failure") return lines(parsed.errors);
  for (const hook of hooks) {
    for (const resource of [
      { type: "Tool", id: "load" },
      { type: "Session", id: "load" },
    ]) {
      cedar.statefulIsAuthorized({
        principal: { type: "Agent", id: "load" },
        action: { type: "Action", id: hook },
        resource,
        context: {},
        entities: [],
        preparsedPolicySetId: setId,
      });
    }
  }
  return [];
}

function load(request: LoadRequest): LoadReply {
  const startedAt = performance.now();
  const parts = cedar.policySetTextToParts(request.text);
  if (parts.type === "failure")
    return { id: request.id, type: "invalid", messages: lines(parts.errors) };
  if (parts.policy_templates.length > 0) {
    return { id: request.id, type: "invalid", messages: ["policy templates are not supported"] };
  }
  const json = parts.policies.map((text) => cedar.policyToJson(text));
  const typeErrors = typeErrorsOf(parts.policies);
  const unparsed = typeErrors.length === 0 ? firstEvaluation(parts.policies, request.id) : [];
  if (unparsed.length > 0) return { id: request.id, type: "invalid", messages: unparsed };
  const ms = performance.now() - startedAt;
  return { id: request.id, type: "loaded", policies: parts.policies, json, typeErrors, ms };
}

parentPort?.on("message", (request: LoadRequest) => {
  try {
    parentPort?.postMessage(load(request));
  } catch (error) {
    // A trap (or any throw) leaves this instance unusable: answer, then end the thread.
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    parentPort?.postMessage({ id: request.id, type: "trap", message } satisfies LoadReply);
    process.exit(1);
  }
});
