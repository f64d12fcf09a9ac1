/** examples/shell-facts.ts, the sample of docs/facts.md "Shell", does what the page says. */
import { describe, expect, it } from "vitest";
import { deletesHome } from "../../../../examples/shell-facts.js";

describe("the shell facts example", () => {
  it("sees the same deletion of the home directory under three spellings, and not ./dist", () => {
    expect(deletesHome("rm -R -f ~")).toBe(true);
    expect(deletesHome("sudo rm -rvf $HOME")).toBe(true);
    expect(deletesHome("echo cm0gLXJmIH4= | base64 -d | sh")).toBe(true);
    expect(deletesHome("rm -rf ./dist")).toBe(false);
  });
});
