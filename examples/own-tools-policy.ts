/**
 * A code policy that classifies tools as the coordinator does: the shipped vocabulary plus the
 * registry file's `toolVocabulary` (docs/vocabulary.md, "Your own tools"). Workers are not sent
 * the registry's vocabulary, so this one reads it from the registry file it is deployed with
 * (HOOKBUS_REGISTRY_FILE; default examples/own-tools-registry.json). Run it with
 * `npx hookbus worker examples/own-tools-policy.ts`.
 */
import { readFileSync } from "node:fs";
import { definePolicy, toolFacts, toolVocabulary } from "hookbus";

const file =
  process.env.HOOKBUS_REGISTRY_FILE ?? new URL("./own-tools-registry.json", import.meta.url);
const registry = JSON.parse(readFileSync(file, "utf8")) as { toolVocabulary?: object };
const vocabulary = toolVocabulary.extend(registry.toolVocabulary ?? {});

export const ownToolsGuard = definePolicy({
  name: "own-tools-guard",
  version: "1.0.0",
  hooks: {
    before_tool_call(event) {
      const facts = toolFacts(event.toolName, event.params, { vocabulary });
      if (facts.class === "shell" && facts.command?.includes("rm -rf") === true)
        return { block: true, blockReason: `recursive delete through ${event.toolName}` };
      return undefined; // no opinion
    },
  },
});
