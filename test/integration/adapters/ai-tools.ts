/**
 * The AI SDK tools the adapter tests offer, wrapped by hookbus, each recording the inputs it
 * actually ran with (in `ran`, by tool name).
 */
import { tool, type Tool } from "ai";
import { z } from "zod";
import { hookbusTools } from "../../../src/adapters/ai/index.js";
import { toolRuns } from "./policies.js";

type ToolName = keyof ReturnType<typeof toolRuns>;

export interface AiRecordingTools {
  ran: ReturnType<typeof toolRuns>;
  tools: Record<string, Tool>;
}

/** The tools `names` (all four by default). */
export function aiRecordingTools(
  names: readonly ToolName[] = ["exec", "read_file", "lookup", "delete_all"],
): AiRecordingTools {
  const ran = toolRuns();
  const define: Record<ToolName, () => Tool> = {
    exec: () =>
      tool({
        description: "Run a shell command",
        inputSchema: z.object({ command: z.string() }),
        execute: (input) => {
          ran.exec.push(input);
          return "ran";
        },
      }),
    read_file: () =>
      tool({
        description: "Read a file",
        inputSchema: z.object({ path: z.string() }),
        execute: (input) => {
          ran.read_file.push(input);
          return `contents of ${input.path}`;
        },
      }),
    lookup: () =>
      tool({
        description: "Look a word up",
        inputSchema: z.object({ word: z.string() }),
        execute: (input) => {
          ran.lookup.push(input);
          return `${input.word}: found`;
        },
      }),
    delete_all: () =>
      tool({
        description: "Delete everything",
        inputSchema: z.object({}),
        execute: (input) => {
          ran.delete_all.push(input);
          return "deleted";
        },
      }),
  };
  const tools = Object.fromEntries(names.map((name) => [name, define[name]()]));
  return { ran, tools: hookbusTools(tools) };
}
