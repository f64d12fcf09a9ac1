/**
 * The registry document's `toolVocabulary`: the same rules as `toolVocabulary.extend` (known
 * classes, non-empty names), bounded (entries per table, name length), every mistake named by
 * its path at once; a snapshot classifies with it, and `registry diff` lists its changes.
 */
import { describe, expect, it } from "vitest";
import { HookbusError } from "../../../src/foundation/errors.js";
import {
  MAX_VOCABULARY_KEY_CHARS,
  MAX_VOCABULARY_NAMES,
  MAX_VOCABULARY_PREFIXES,
  parseRegistryDocument,
} from "../../../src/registry/document.js";
import { diffRegistry, formatRegistryDiff } from "../../../src/registry/diff.js";
import { RegistrySnapshot } from "../../../src/registry/snapshot.js";
import { toolVocabulary } from "../../../src/vocabulary/vocabulary.js";

function refusal(toolVocabulary: unknown): HookbusError {
  try {
    parseRegistryDocument({ policies: [], toolVocabulary }, "r.json");
  } catch (error) {
    if (error instanceof HookbusError) return error;
    throw error;
  }
  throw new Error("expected HOOKBUS_INVALID_REGISTRY");
}

function issues(toolVocabulary: unknown) {
  const error = refusal(toolVocabulary);
  expect(error.code).toBe("HOOKBUS_INVALID_REGISTRY");
  return (error.details as { issues: { path: string; rule: string; message: string }[] }).issues;
}

const table = (n: number) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`t${i}`, "shell"]));

describe("toolVocabulary in the registry document", () => {
  it("accepts names and prefixes of known classes, up to the bounds", () => {
    const vocabulary = {
      names: {
        ...table(MAX_VOCABULARY_NAMES - 1),
        ["x".repeat(MAX_VOCABULARY_KEY_CHARS)]: "other",
      },
      prefixes: table(MAX_VOCABULARY_PREFIXES),
    };
    const document = parseRegistryDocument({ policies: [], toolVocabulary: vocabulary });
    expect(Object.keys(document.toolVocabulary?.names ?? {})).toHaveLength(MAX_VOCABULARY_NAMES);
  });

  it("refuses an unknown class, naming the entry and the known classes", () => {
    const error = refusal({ names: { deploy: "shel" } });
    expect(error.message).toContain(
      'toolVocabulary.names.deploy: unknown tool class "shel"; known: shell, file-read',
    );
  });

  it("refuses too many entries, with the limit in the message", () => {
    expect(issues({ names: table(MAX_VOCABULARY_NAMES + 1) })).toEqual([
      {
        path: "toolVocabulary.names",
        rule: "too_many_entries",
        message: `${MAX_VOCABULARY_NAMES + 1} entries; at most ${MAX_VOCABULARY_NAMES}`,
      },
    ]);
    expect(issues({ prefixes: table(MAX_VOCABULARY_PREFIXES + 1) })).toEqual([
      expect.objectContaining({
        path: "toolVocabulary.prefixes",
        message: `${MAX_VOCABULARY_PREFIXES + 1} entries; at most ${MAX_VOCABULARY_PREFIXES}`,
      }),
    ]);
  });

  it("refuses an empty, reserved or too long name, and reports every mistake at once", () => {
    const long = "y".repeat(MAX_VOCABULARY_KEY_CHARS + 1);
    const found = issues({
      names: { "": "shell", [long]: "shell", bad: "nope" },
      prefixes: JSON.parse('{"__proto__": "shell"}') as unknown,
    });
    expect(found.map((i) => i.rule).sort()).toEqual(
      ["empty_name", "invalid_value", "name_too_long", "reserved_name"].sort(),
    );
    expect(found.find((i) => i.rule === "name_too_long")?.message).toBe(
      `a name of ${MAX_VOCABULARY_KEY_CHARS + 1} characters; at most ${MAX_VOCABULARY_KEY_CHARS}`,
    );
  });

  it("refuses keys other than names and prefixes", () => {
    expect(issues({ names: {}, classes: {} }).map((i) => i.path)).toEqual(["toolVocabulary"]);
  });
});

describe("a snapshot's vocabulary", () => {
  it("is the shipped one extended by the document (the document's entries win)", () => {
    const document = parseRegistryDocument({
      policies: [],
      toolVocabulary: {
        names: { deploy: "shell", exec: "other" },
        prefixes: { notify_: "send-message" },
      },
    });
    const snapshot = new RegistrySnapshot(3, document);
    const { vocabulary } = snapshot;
    expect(snapshot.vocabulary).toBe(vocabulary); // built once per revision, not per call
    expect(vocabulary.classify("deploy").class).toBe("shell");
    expect(vocabulary.classify("DEPLOY").class).toBe("shell");
    expect(vocabulary.classify("exec").class).toBe("other");
    expect(vocabulary.classify("notify_ops").class).toBe("send-message");
    expect(vocabulary.classify("Bash").class).toBe("shell");
    expect(RegistrySnapshot.empty().vocabulary).toBe(toolVocabulary);
  });
});

describe("registry diff", () => {
  it("lists vocabulary entries added, removed and reclassified", () => {
    const before = parseRegistryDocument({
      policies: [],
      toolVocabulary: { names: { deploy: "shell", old: "other" } },
    });
    const after = parseRegistryDocument({
      policies: [],
      toolVocabulary: { names: { deploy: "file-write", constructor: "shell" } },
    });
    const diff = diffRegistry(before, after);
    expect(diff.same).toBe(false);
    expect(formatRegistryDiff(diff, 4).split("\n")).toEqual([
      "against registry revision 4:",
      '~ toolVocabulary.names.constructor: (unset) → "shell"',
      '~ toolVocabulary.names.deploy: "shell" → "file-write"',
      '~ toolVocabulary.names.old: "other" → (unset)',
    ]);
    expect(diffRegistry(after, after).same).toBe(true);
  });
});
