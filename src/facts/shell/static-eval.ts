/**
 * The output of a pipeline whose result is fixed by its text: `echo cm0gLXJmIH4= | base64 -d` is
 * `rm -rf ~`, `$(echo rm -rf /)` is `rm -rf /`. Only printing and decoding steps are evaluated, in
 * process and bounded in size; anything else is unknown (undefined), never guessed.
 */
import type { ShellNode } from "./tree.js";
import { basename } from "./wrappers.js";
import { decodeAnsiC, wordValue, type WordEnv } from "./words.js";

export interface StaticStage {
  argv: readonly string[];
  /** Text given to its input in the command itself (a here-document or here-string). */
  stdin?: string;
}

function source(stage: StaticStage): string | undefined {
  const [name = "", ...args] = stage.argv;
  const program = basename(name);
  if (program === "echo") {
    let i = 0;
    let newline = true;
    let escapes = false;
    for (; i < args.length && /^-[neE]+$/u.test(args[i] ?? ""); i++) {
      newline &&= !(args[i] ?? "").includes("n");
      escapes ||= (args[i] ?? "").includes("e");
    }
    const text = args.slice(i).join(" ");
    return (escapes ? decodeAnsiC(text) : text) + (newline ? "\n" : "");
  }
  if (program === "printf") {
    const [format = "", ...rest] = args;
    if (rest.length === 0 && !format.replace(/%%/gu, "").includes("%")) {
      return decodeAnsiC(format.replace(/%%/gu, "%"));
    }
    return format === "%s" || format === "%s\\n" ? rest.join("") : undefined;
  }
  if (program === "cat" && args.length === 0) return stage.stdin;
  return undefined;
}

function decode(stage: StaticStage, input: string, maxLength: number): string | undefined {
  const [name = "", ...args] = stage.argv;
  const program = basename(name);
  const decoding = args.some((a) => /^-[A-Za-z]*[dD]$|^--decode$/u.test(a));
  if (program === "base64" && decoding) {
    const clean = input.replace(/\s+/gu, "");
    if (clean.length > maxLength * 2) return undefined;
    return Buffer.from(clean, "base64").toString("utf8");
  }
  if (program === "xxd" && args.some((a) => /^-[A-Za-z]*r/u.test(a))) {
    const hex = input.replace(/[^0-9a-fA-F]/gu, "");
    if (hex.length > maxLength * 2) return undefined;
    return Buffer.from(hex, "hex").toString("utf8");
  }
  if (program === "rev") {
    return input
      .split("\n")
      .map((line) => [...line].reverse().join(""))
      .join("\n");
  }
  if (program === "cat" && args.length === 0) return input;
  return undefined;
}

/** The output of the stages in order, or undefined when any step is not static. */
export function staticOutput(
  stages: readonly StaticStage[],
  maxLength: number,
): string | undefined {
  const [first, ...rest] = stages;
  if (first === undefined) return undefined;
  let text = source(first);
  for (const stage of rest) {
    if (text === undefined || text.length > maxLength) return undefined;
    text = decode(stage, text, maxLength);
  }
  return text !== undefined && text.length <= maxLength ? text : undefined;
}

/** Words of a simple command node, when every one is static. */
function staticArgv(node: ShellNode, env: WordEnv): string[] | undefined {
  const argv: string[] = [];
  for (const child of node.namedChildren) {
    if (child === null || child.type === "variable_assignment") continue;
    if (child.type.endsWith("_redirect")) return undefined;
    const value = wordValue(child, env);
    if (!value.static) return undefined;
    argv.push(value.text);
  }
  return argv;
}

/** `$(…)` whose body is a static pipeline of simple commands: its output without the last newline. */
export function substitutionOutput(
  node: ShellNode,
  env: WordEnv,
  maxLength: number,
): string | undefined {
  const body = node.namedChildren.filter((c): c is ShellNode => c !== null);
  if (body.length !== 1 || body[0] === undefined) return undefined;
  const commands = body[0].type === "pipeline" ? body[0].namedChildren : [body[0]];
  const stages: StaticStage[] = [];
  for (const command of commands) {
    if (command?.type !== "command") return undefined;
    const argv = staticArgv(command, env);
    if (argv === undefined) return undefined;
    stages.push({ argv });
  }
  return staticOutput(stages, maxLength)?.replace(/\n+$/u, "");
}
