/** The log record's compiled validator, from `schemas/log-record.schema.json` (foundation/schema-validator.ts). */
import {
  compiledValidator,
  readSchemaFile,
  type JsonSchema,
  type Validator,
} from "../foundation/schema-validator.js";
import { LogRecord } from "./record.js";

/**
 * The record's oneOf, decided by `kind`: each branch has a distinct `kind` const, so at most one
 * can match, and ajv's discriminator checks only the branch of the value's kind (the same verdict
 * as oneOf) instead of building an error object for each of the other four on every record read.
 */
function recordByKind(schema: JsonSchema): JsonSchema {
  const defs = schema.$defs as Record<string, JsonSchema>;
  return {
    ...schema,
    $defs: {
      ...defs,
      LogRecord: {
        ...defs.LogRecord,
        // ajv applies a discriminator to objects only: a non-object must still fail here.
        type: "object",
        discriminator: { propertyName: "kind" },
      },
    },
  };
}

let compiled: Validator<LogRecord> | undefined;

export function logRecordValidator(): Validator<LogRecord> {
  compiled ??= compiledValidator<LogRecord>({
    name: "log-record",
    zod: LogRecord,
    jsonSchema: recordByKind(readSchemaFile("log-record")),
  });
  return compiled;
}
