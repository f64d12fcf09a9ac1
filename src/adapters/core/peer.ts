/**
 * Frameworks are optional peer dependencies: an adapter loads what it needs of one at run time
 * and, when it is not installed, fails with HOOKBUS_MISSING_PEER naming the package to install,
 * not with Node's bare ERR_MODULE_NOT_FOUND from deep inside the adapter.
 */
import { HookbusError } from "../../foundation/errors.js";

/**
 * `load()` (a dynamic import of `peer` or of a module that imports it); HOOKBUS_MISSING_PEER when
 * `peer` is not installed. `feature` says what needs it ("hookbus/pi", "hookbus mcp-proxy").
 */
export async function importPeer<T>(
  peer: string,
  feature: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND") {
      throw new HookbusError(
        "HOOKBUS_MISSING_PEER",
        `${feature} needs ${peer}: npm install ${peer}`,
        { peer },
        error,
      );
    }
    throw error;
  }
}
