/**
 * The services' first import: refuses an unsupported Node (HOOKBUS_UNSUPPORTED_NODE, exit 2) before
 * anything else loads, as bin/hookbus.js does for the CLI. ES modules evaluate imports in order,
 * so importing this first runs the check before the other imports' code.
 */
import { unsupportedNode } from "../src/foundation/runtime.js";

const refusal = unsupportedNode();
if (refusal !== undefined) {
  process.stderr.write(`${refusal.code}: ${refusal.message}\n`);
  process.exit(2);
}
