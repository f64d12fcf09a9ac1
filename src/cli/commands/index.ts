/** Every `hookbus` command, by name. Adding a command is adding a line here. */
import type { Command } from "../command.js";
import { auditCommand } from "./audit.js";
import { coordinatorCommand } from "./coordinator.js";
import { policyCommand } from "./policy.js";
import { registryCommand } from "./registry.js";
import { replayCommand } from "./replay.js";
import { workerCommand } from "./worker.js";

export const commands: Record<string, Command> = {
  registry: registryCommand,
  coordinator: coordinatorCommand,
  worker: workerCommand,
  audit: auditCommand,
  replay: replayCommand,
  policy: policyCommand,
};
