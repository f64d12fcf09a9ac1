/** Every `hookbus` command, by name. Adding a command is adding a line here. */
import type { Command } from "../command.js";
import { approvalsCommand } from "./approvals.js";
import { auditCommand } from "./audit.js";
import { authCommand } from "./auth.js";
import { claudeCodeDaemonCommand } from "./claude-code-daemon.js";
import { claudeCodeHookCommand } from "./claude-code-hook.js";
import { conformanceCommand } from "./conformance.js";
import { coordinatorCommand } from "./coordinator.js";
import { indexerCommand } from "./indexer.js";
import { eraseCommand } from "./erase.js";
import { initCommand } from "./init.js";
import { mcpProxyCommand } from "./mcp-proxy.js";
import { policyCommand } from "./policy.js";
import { registryCommand } from "./registry.js";
import { replayCommand } from "./replay.js";
import { statusCommand } from "./status.js";
import { resumeCommand, stopCommand } from "./stop.js";
import { uiCommand } from "./ui.js";
import { sealerCommand } from "./sealer.js";
import { workerCommand } from "./worker.js";

export const commands: Record<string, Command> = {
  init: initCommand,
  registry: registryCommand,
  coordinator: coordinatorCommand,
  worker: workerCommand,
  audit: auditCommand,
  replay: replayCommand,
  status: statusCommand,
  stop: stopCommand,
  resume: resumeCommand,
  auth: authCommand,
  sealer: sealerCommand,
  indexer: indexerCommand,
  policy: policyCommand,
  "claude-code-hook": claudeCodeHookCommand,
  "claude-code-daemon": claudeCodeDaemonCommand,
  "mcp-proxy": mcpProxyCommand,
  ui: uiCommand,
  approvals: approvalsCommand,
  erase: eraseCommand,
  conformance: conformanceCommand,
};
