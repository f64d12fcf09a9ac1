/**
 * The OpenAI Agents SDK tools the adapter tests offer, wrapped by hookbus, each recording the
 * inputs it actually ran with (in `ran`, by tool name).
 */
import { tool } from "@openai/agents";
import { z } from "zod";
import { hookbusTools } from "../../../src/adapters/openai-agents/index.js";
import { toolRuns } from "./policies.js";

type ToolName = keyof ReturnType<typeof toolRuns>;

export interface AgentsRecordingTools {
  ran: ReturnType<typeof toolRuns>;
  tools: ReturnType<typeof hookbusTools>;
}

/** The tools `names` (all four by default), in that order. */
export function agentsRecordingTools(
  names: readonly ToolName[] = ["exec", "read_file", "lookup", "delete_all"],
): AgentsRecordingTools {
  const ran = toolRuns();
  const define = {
    exec: () =>
      tool({
        name: "exec",
        description: "Run a shell command",
        parameters: z.object({ command: z.string() }),
        execute: (input) => {
          ran.exec.push(input);
          return "ran";
        },
      }),
    read_file: () =>
      tool({
        name: "read_file",
        description: "Read a file",
        parameters: z.object({ path: z.string() }),
        execute: (input) => {
          ran.read_file.push(input);
          return `contents of ${input.path}`;
        },
      }),
    lookup: () =>
      tool({
        name: "lookup",
        description: "Look a word up",
        parameters: z.object({ word: z.string() }),
        execute: (input) => {
          ran.lookup.push(input);
          return `${input.word}: found`;
        },
      }),
    delete_all: () =>
      tool({
        name: "delete_all",
        description: "Delete everything",
        parameters: z.object({}),
        execute: (input) => {
          ran.delete_all.push(input);
          return "deleted";
        },
      }),
  };
  return { ran, tools: hookbusTools(names.map((name) => define[name]())) };
}
