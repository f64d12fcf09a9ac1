/**
 * A policy with session state (docs/policy-workers.md): it defines the policy and does nothing else
 * when imported. Serve it with `npx hookbus worker examples/no-email-after-web-policy.ts`, or from
 * your own program the way examples/run-policy.ts serves no-shell; test it in process with
 * examples/invoke-policy.ts.
 */
import { definePolicy } from "hookbus";

export const noEmailAfterWeb = definePolicy({
  name: "no-email-after-web", // must match the registry entry
  version: "1.0.0", // recorded with every verdict
  hooks: {
    // Observational: delivered from the log, at least once.
    async after_tool_call(event, ctx, { state }) {
      if (event.toolName === "web_fetch") await state.set("tainted", true);
    },
    // Modifying: return a verdict, or nothing for "no opinion".
    async before_tool_call(event, ctx, { state }) {
      const calls = await state.update<number>("toolCalls", (n) => (n ?? 0) + 1);
      if (calls > 50)
        return { block: true, blockReason: "more than 50 tool calls in this session" };
      if (event.toolName === "email.send" && (await state.get<boolean>("tainted")))
        return { block: true, blockReason: "session read untrusted web content" };
      return undefined;
    },
  },
});
