/** Where the audit index is: `--index URL`, else `HOOKBUS_INDEX_URL`. */
import { HookbusError } from "../../foundation/errors.js";

export const INDEX_URL_ENV = "HOOKBUS_INDEX_URL";

export function indexUrlFrom(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const url = flag ?? env[INDEX_URL_ENV];
  return url === undefined || url === "" ? undefined : url;
}

export function requireIndexUrl(flag: string | undefined, env?: NodeJS.ProcessEnv): string {
  const url = indexUrlFrom(flag, env);
  if (url === undefined)
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `no index: pass --index postgres://… or set ${INDEX_URL_ENV}`,
      { argument: "--index" },
    );
  return url;
}
