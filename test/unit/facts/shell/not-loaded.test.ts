/**
 * Facts asked for before `await loadShellParser()` are an error with a code, never an empty fact
 * set that a policy would read as "nothing happens". (Each test file has its own module graph, so
 * the parser is not loaded here.)
 */
import { describe, expect, it } from "vitest";
import { isHookbusError } from "../../../../src/foundation/errors.js";
import { shellFacts, shellParserLoaded } from "../../../../src/facts/shell/index.js";

describe("shell facts before the parser is loaded", () => {
  it("throws HOOKBUS_SHELL_PARSER_UNAVAILABLE instead of answering", () => {
    expect(shellParserLoaded()).toBe(false);
    let thrown: unknown;
    try {
      shellFacts("rm -rf /");
    } catch (error) {
      thrown = error;
    }
    expect(isHookbusError(thrown, "HOOKBUS_SHELL_PARSER_UNAVAILABLE")).toBe(true);
  });
});
