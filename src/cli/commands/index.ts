/** Every `hookbus` command, by name. Adding a command is adding a line here. */
import type { Command } from "../command.js";
import { coordinatorCommand } from "./coordinator.js";
import { registryCommand } from "./registry.js";

export const commands: Record<string, Command> = {
  registry: registryCommand,
  coordinator: coordinatorCommand,
};
