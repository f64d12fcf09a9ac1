/**
 * fast-check values shaped by a JSON Schema: mostly valid documents (so the property tests reach
 * the deep rules, not only "not an object"), each node sometimes replaced by an arbitrary JSON
 * value, a boundary string or a stray key (so both validators also see near misses).
 */
import fc from "fast-check";

type Schema = Record<string, unknown>;

const anyJson = fc.jsonValue({ maxDepth: 2 });
const MAX_DEPTH = 7;

export function schemaArbitrary(root: Schema): fc.Arbitrary<unknown> {
  const defs = (root.$defs ?? {}) as Record<string, Schema>;

  function resolve(schema: Schema): Schema {
    const ref = schema.$ref;
    if (typeof ref !== "string") return schema;
    const name = ref.replace(/^#\/\$defs\//, "");
    if (ref === "#") return root;
    const found = defs[name];
    if (found === undefined) throw new Error(`unresolved $ref ${ref}`);
    return found;
  }

  function valid(input: Schema, depth: number): fc.Arbitrary<unknown> {
    const schema = resolve(input);
    if (depth > MAX_DEPTH) return anyJson;
    if ("const" in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
    const branches = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
    if (branches !== undefined) return fc.oneof(...branches.map((b) => node(b, depth + 1)));
    const type = schema.type;
    if (Array.isArray(type))
      return fc.oneof(...type.map((t) => valid({ ...schema, type: t }, depth)));
    switch (type) {
      case "string":
        return stringArbitrary(schema);
      case "integer":
      case "number":
        return numberArbitrary(schema, type === "integer");
      case "boolean":
        return fc.boolean();
      case "null":
        return fc.constant(null);
      case "array":
        return fc.array(node((schema.items ?? {}) as Schema, depth + 1), {
          minLength: (schema.minItems as number | undefined) ?? 0,
          maxLength: Math.min((schema.maxItems as number | undefined) ?? 3, 3),
        });
      case "object":
        return objectArbitrary(schema, depth);
      default:
        return anyJson;
    }
  }

  function objectArbitrary(schema: Schema, depth: number): fc.Arbitrary<unknown> {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const required = new Set((schema.required ?? []) as string[]);
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [key, sub] of Object.entries(properties)) model[key] = node(sub, depth + 1);
    const known = fc.record(model, {
      requiredKeys: Object.keys(model).filter((k) => required.has(k)),
    });
    const additional = schema.additionalProperties;
    const extraValue =
      typeof additional === "object" && additional !== null
        ? node(additional as Schema, depth + 1)
        : anyJson;
    const extras = fc.dictionary(
      fc.oneof(
        fc.string({ maxLength: 6 }),
        fc.constantFrom(...Object.keys(properties), "__proto__", "constructor"),
      ),
      extraValue,
      { maxKeys: 2 },
    );
    return fc
      .tuple(
        known,
        fc.oneof(
          { weight: 7, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: extras },
        ),
      )
      .map(([base, extra]) => {
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(extra ?? {}))
          Object.defineProperty(out, k, {
            value: v,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        for (const [k, v] of Object.entries(base as Record<string, unknown>))
          Object.defineProperty(out, k, {
            value: v,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        return out;
      });
  }

  /** A node: usually valid, sometimes any JSON value. */
  function node(schema: Schema, depth: number): fc.Arbitrary<unknown> {
    return fc.oneof(
      { weight: 40, arbitrary: fc.constant(null).chain(() => valid(schema, depth)) },
      { weight: 1, arbitrary: anyJson },
    );
  }

  return node(root, 0);
}

function stringArbitrary(schema: Schema): fc.Arbitrary<string> {
  const min = (schema.minLength as number | undefined) ?? 0;
  const max = (schema.maxLength as number | undefined) ?? 12;
  const pattern = schema.pattern;
  const edges = fc.constantFrom(
    "",
    "😀".repeat(Math.max(1, Math.ceil(max / 2))),
    "x".repeat(max),
    "x".repeat(max + 1),
  );
  const options: Array<fc.WeightedArbitrary<string>> = [
    {
      weight: 6,
      arbitrary: fc.string({
        minLength: min,
        maxLength: Math.min(max, min + 12),
        unit: "grapheme",
      }),
    },
    // Around the limits, counted in UTF-16 units (zod) vs code points (a careless compile).
    { weight: 1, arbitrary: edges },
  ];
  if (typeof pattern === "string") {
    options[0] = { weight: 12, arbitrary: fc.stringMatching(new RegExp(pattern)) };
    options.push({
      weight: 1,
      arbitrary: fc.constantFrom(
        "2026-11-24T23:00:00Z",
        "2026-11-24T23:00:00.123Z",
        "2026-02-30T00:00:00Z",
        "2026-11-24 23:00:00",
        "a".repeat(64),
        "0".repeat(64),
        "A".repeat(64),
      ),
    });
  }
  return fc.oneof(...options);
}

function numberArbitrary(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = schema.minimum as number | undefined;
  const max = schema.maximum as number | undefined;
  const edges = [
    0,
    -1,
    1,
    0.5,
    -0,
    Number.MAX_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER + 2,
    -Number.MAX_SAFE_INTEGER - 2,
    1e300,
  ];
  if (min !== undefined) edges.push(min, min - 1, min + 0.5);
  if (max !== undefined) edges.push(max, max + 1);
  return fc.oneof(
    {
      weight: 4,
      arbitrary: integer
        ? fc.integer({ min: Math.max(min ?? -1000, -1000), max: Math.min(max ?? 1000, 1000) })
        : fc.double({
            min: Math.max(min ?? -1000, -1000),
            max: Math.min(max ?? 1000, 1000),
            noNaN: true,
          }),
    },
    { weight: 1, arbitrary: fc.constantFrom(...edges) },
  );
}
