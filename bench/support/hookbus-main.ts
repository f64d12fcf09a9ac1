/**
 * The hookbus CLI for compiled benchmarks (`npm run bench` runs .tmp/bench): bin/hookbus.js runs
 * dist/, which a bench build does not produce (and may be stale), so this runs the same `main`
 * from the tree compiled beside it, with no TypeScript loader.
 */
import { main } from "../../src/cli/main.js";

process.exitCode = await main(process.argv.slice(2));
