/**
 * The layers of src/, enforced (docs/architecture.md is the map). A folder may import its own
 * files and folders of a LOWER rank, nothing else: no upward import, no import between peers of
 * one rank, so no folder cycle can exist. File cycles are refused too, inside a folder as well.
 * `npm run lint` runs this; test/unit/architecture proves it fails on a deliberate violation.
 */
const { LAYERS } = require("./scripts/layers.cjs");

const alternation = (folders) => `^src/(${folders.join("|")})/`;

/** One rule per rank: its folders may not import any folder of the same or a higher rank. */
const layerRules = LAYERS.map(({ layer, folders }, rank) => {
  const notBelow = LAYERS.slice(rank).flatMap((l) => l.folders);
  return {
    name: `layer-${folders.join("-")}`,
    comment:
      `${folders.join(", ")} (${layer}) may import only folders below it in docs/architecture.md ` +
      `(${
        LAYERS.slice(0, rank)
          .flatMap((l) => l.folders)
          .join(", ") || "nothing"
      }): this import goes up or sideways.`,
    severity: "error",
    from: { path: alternation(folders), pathNot: "\\.test\\.ts$" },
    to: {
      path: alternation(notBelow),
      // A folder's own files are always fine.
      pathNot: "^src/$1/",
    },
  };
});

/** Every folder of src/ must have a place in the map, so a new one cannot slip past the rules. */
const known = LAYERS.flatMap((l) => l.folders);

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: "no-circular",
      comment: "A file cycle: two modules that import each other, directly or through others.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "unmapped-folder",
      comment: `A folder of src/ that docs/architecture.md's layers do not name: add it to LAYERS in .dependency-cruiser.cjs.`,
      severity: "error",
      from: { path: "^src/[^/]+/", pathNot: `${alternation(known)}|^src/[^/]+\\.ts$` },
      to: {},
    },
    {
      name: "no-example-policy-deps",
      comment:
        "libphonenumber-js and validator serve only the example PII redactor (services/policies): " +
        "services/policies/package.json declares them; the package itself must not need them.",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "node_modules/(libphonenumber-js|validator)/" },
    },
    {
      name: "src-imports-only-src",
      comment:
        "src/ is the package: it may not import test/, bench/, services/, examples/ or scripts/.",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^(test|bench|services|examples|scripts)/" },
    },
    {
      name: "surfaces-read-through-audit",
      comment:
        "The UI reads the audit log through src/audit's AuditSource, never the indexer (issue 33).",
      severity: "error",
      from: { path: "^src/ui/" },
      to: { path: "^src/indexer/" },
    },
    {
      name: "cli-uses-indexer-faces",
      comment:
        "The CLI reaches the indexer only through its faces (src/indexer/index.ts, service.ts); " +
        "reading the audit log goes through src/audit's AuditSource (issue 33).",
      severity: "error",
      from: { path: "^src/cli/" },
      to: { path: "^src/indexer/", pathNot: "^src/indexer/(index|service)\\.ts$" },
    },
    {
      name: "entry-only-at-root",
      comment: "src/index.ts is the main entry point; no module inside src/ may import it.",
      severity: "error",
      from: { path: "^src/.+/" },
      to: { path: "^src/index\\.ts$" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^src/ui/static/" },
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".json"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
