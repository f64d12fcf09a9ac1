/**
 * The public API, entry point by entry point (package.json "exports"), as API Extractor reports
 * in docs/api/. `npm run api` rewrites them after an intended change; `npm run api:check` (part of
 * `npm test`) fails when the built .d.ts no longer match them, so the exported surface changes
 * only on purpose. Run after `npm run build` (the reports are read from dist/*.d.ts).
 */
import { mkdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  CompilerState,
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  ExtractorMessageCategory,
  type ExtractorMessage,
} from "@microsoft/api-extractor";

const root = fileURLToPath(new URL("../", import.meta.url));
const update = process.argv.includes("--update");
const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as {
  exports: Record<string, string | { types?: string }>;
};

/** `.` → hookbus, `./coordinator` → hookbus-coordinator. */
function reportName(subpath: string): string {
  return subpath === "." ? "hookbus" : `hookbus-${subpath.slice(2).replaceAll("/", "-")}`;
}

const entries = Object.entries(pkg.exports).flatMap(([subpath, target]) =>
  typeof target === "object" && target.types !== undefined
    ? [{ name: reportName(subpath), types: target.types }]
    : [],
);

mkdirSync(`${root}docs/api`, { recursive: true });
let compilerState: CompilerState | undefined;
let failed = 0;
for (const entry of entries) {
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: `<projectFolder>/${entry.types}`,
      compiler: { tsconfigFilePath: "<projectFolder>/tsconfig.build.json" },
      apiReport: {
        enabled: true,
        reportFileName: `${entry.name}.api.md`,
        reportFolder: "<projectFolder>/docs/api/",
        reportTempFolder: "<projectFolder>/.tmp/api/",
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        // The report is about the surface; doc-comment style is the code review's business.
        tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
        extractorMessageReporting: {
          // Kept out of the report: their source line numbers would fail the check on any edit above them.
          default: { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: false },
          "ae-missing-release-tag": { logLevel: ExtractorLogLevel.None },
          "ae-undocumented": { logLevel: ExtractorLogLevel.None },
        },
        compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
      },
    },
    configObjectFullPath: undefined,
    packageJsonFullPath: `${root}package.json`,
  });
  // One TypeScript program for all entry points (each entry would otherwise build its own).
  compilerState ??= CompilerState.create(config, {
    additionalEntryPoints: entries.map((e) => `${root}${e.types.replace(/^\.\//, "")}`),
  });
  const result = Extractor.invoke(config, {
    localBuild: update,
    compilerState,
    messageCallback(message: ExtractorMessage) {
      // One line per finding (a forgotten export, say); the console stays readable.
      if (message.category === ExtractorMessageCategory.Extractor) {
        message.handled = true;
        if (message.logLevel !== ExtractorLogLevel.None)
          console.warn(`api: ${entry.name}: ${message.messageId}: ${message.text}`);
      }
    },
  });
  if (result.errorCount > 0 || (!update && result.apiReportChanged)) {
    failed++;
    console.error(
      `api: ${entry.name}: the exported surface differs from docs/api/${entry.name}.api.md; ` +
        "if the change is intended, run `npm run api` and commit the report",
    );
  }
}
if (failed > 0) process.exit(1);
console.log(`api: ${entries.length} entry points ${update ? "written" : "match docs/api/"}`);
