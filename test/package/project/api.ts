// The public API from TypeScript: types resolve through the package's "types" condition.
import { HOOK_NAMES, definePolicy, type Decision } from "hookbus";
import { findNatsServer, type NatsServerHandle } from "hookbus/testing";

const policy = definePolicy({
  name: "typed",
  version: "1.0.0",
  hooks: { before_tool_call: (event) => (event.toolName === "x" ? { block: true } : undefined) },
});
const outcome: Decision<"before_tool_call">["outcome"] = "allow";
const handle: NatsServerHandle | undefined = undefined;
console.log(
  JSON.stringify({
    policy: policy.name,
    hooks: HOOK_NAMES.length > 0,
    outcome,
    handle: handle ?? null,
    findNatsServer: typeof findNatsServer,
  }),
);
