/** The coordinator service: `tsx services/coordinator.ts [options]` = `hookbus coordinator [options]`. */
import { main } from "../src/cli/main.js";

process.exitCode = await main(["coordinator", ...process.argv.slice(2)]);
