/** hookbus/auth: `hookbus auth` without the CLI, and the permissions of each role (docs/security.md). */
export {
  generateAuth,
  readAuthDescription,
  type GenerateAuthOptions,
  type GeneratedAuth,
} from "./generate.js";
export {
  AuthDescription,
  parseAuthDescription,
  type AuthDescriptionInput,
  type AuthRole,
  type AuthUser,
} from "./description.js";
export { permissionsFor, type Permissions } from "./permissions.js";
export { inboxPrefixFor } from "./inbox.js";
export { readNkeySeedFile } from "../bus/nkey-seed.js";
export {
  TRUSTED_KEYS_FILE,
  signingKeyFileName,
  type CoordinatorSigningKey,
} from "./signing-keys.js";
