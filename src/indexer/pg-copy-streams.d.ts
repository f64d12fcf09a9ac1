/** The part of pg-copy-streams (no bundled types) the indexer uses: COPY … FROM STDIN. */
declare module "pg-copy-streams" {
  import type { Writable } from "node:stream";
  import type { Submittable } from "pg";

  export interface CopyStreamQuery extends Writable, Submittable {
    /** Rows copied, once the stream finished. */
    rowCount: number;
  }
  export function from(text: string): CopyStreamQuery;
}
