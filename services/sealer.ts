/** The sealer service: `tsx services/sealer.ts [options]` = `hookbus sealer [options]`. */
import { main } from "../src/cli/main.js";

process.exitCode = await main(["sealer", ...process.argv.slice(2)]);
