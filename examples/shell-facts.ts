/**
 * Shell facts (docs/facts.md, "Shell"): load the parser once at startup, then ask synchronously.
 * `rm -R -f ~`, `sudo rm -rvf $HOME` and `echo cm0gLXJmIH4= | base64 -d | sh` give the same answer.
 */
import { loadShellParser, shellFacts } from "../src/facts/shell/index.js";

await loadShellParser(); // once, before the first call is decided

export function deletesHome(command: string): boolean {
  const facts = shellFacts(command, { home: "/home/dev", cwd: "/home/dev/app" });
  if (facts.unparsed !== undefined) return true; // unparsed: treat as needing approval
  return facts.deletesRecursively && facts.targetsHome;
}
