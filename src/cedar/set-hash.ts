/**
 * The hash a Cedar set is known by: in policy outcomes (`version`), in records, and in the
 * coordinators' discovery answers. Apart from the engine, so that `hookbus status` can compare a
 * coordinator's loaded set with the registry's text without loading WebAssembly.
 */
import { createHash } from "node:crypto";

export function cedarSetHash(text: string): string {
  return `sha256:${createHash("sha256").update(text).digest("hex")}`;
}
