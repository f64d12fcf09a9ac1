/** The indexer service: `tsx services/indexer.ts [options]` = `hookbus indexer [options]`. */
import { main } from "../src/cli/main.js";

process.exitCode = await main(["indexer", ...process.argv.slice(2)]);
