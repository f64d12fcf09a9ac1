/**
 * The policy-worker service: `tsx services/policy-worker.ts MODULE [...] [options]` =
 * `hookbus worker MODULE [...]`. With no module it serves the example policies.
 */
import { fileURLToPath } from "node:url";
import { main } from "../src/cli/main.js";

const args = process.argv.slice(2);
const modules = args.filter((a) => /\.(m?[jt]s)$/.test(a));
const examples = fileURLToPath(new URL("./policies/index.ts", import.meta.url));
process.exitCode = await main(["worker", ...(modules.length === 0 ? [examples] : []), ...args]);
