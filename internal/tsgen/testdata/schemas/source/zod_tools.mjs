// Writes ../zod-real.json: tools whose schemas zod-to-json-schema 3 (its
// default $refStrategy "root": repeats become JSON pointers) and zod 4's own
// z.toJSONSchema emit. ES modules resolve imports beside the script, so copy
// it into a folder where `npm i zod@4 zod-to-json-schema@3` ran, and there:
// node zod_tools.mjs path/to/testdata/schemas/zod-real.json
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as z3 from "zod/v3";
import { z } from "zod";
import { zodToJsonSchema } from "zod-to-json-schema";

const edit = z3.object({
  oldText: z3.string().describe("Text to search for - must match exactly"),
  newText: z3.string(),
});
const kind = z3.enum(["file", "dir"]);
const node3 = z3.lazy(() => z3.object({ name: z3.string(), kids: z3.array(node3) }));
const v3 = {
  edit: z3.object({
    edits: z3.array(edit),
    undo: z3.array(edit).optional(),
    primary: edit.optional(),
    kind,
    also: kind.nullable(),
    range: z3.tuple([z3.number(), z3.number()]),
    args: z3.tuple([z3.string()]).rest(z3.number()),
    labels: z3.record(z3.string()),
    flags: z3.object({ strict: z3.boolean() }).catchall(z3.number()),
    when: z3.string().datetime().default("2020-01-01T00:00:00Z"),
    literal: z3.literal("x"),
    mixed: z3.union([z3.literal("a"), z3.literal(1), z3.literal(true)]),
    shape: z3.discriminatedUnion("type", [
      z3.object({ type: z3.literal("circle"), r: z3.number() }),
      z3.object({ type: z3.literal("square"), side: z3.number() }),
    ]),
    any: z3.any(),
    tree: node3,
  }),
};

const node4 = z.object({ name: z.string(), get kids() { return z.array(node4); } });
const json4 = z.lazy(() => z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(json4), z.record(z.string(), json4)]));
const v4 = {
  edit: z.object({
    edits: z.array(z.object({ oldText: z.string(), newText: z.string() })),
    pair: z.tuple([z.string(), z.number()]),
    head: z.tuple([z.string()]).rest(z.boolean()),
    nullable: z.string().nullable(),
    optional: z.number().optional().describe("A */ in a description"),
    strict: z.strictObject({ a: z.string() }),
    loose: z.looseObject({ a: z.string() }),
    labels: z.record(z.string(), z.number()),
    tree: node4,
    json: json4,
  }),
};

const tools = [
  { name: "edit_v3", description: "zod 3 schema, zod-to-json-schema.", inputSchema: zodToJsonSchema(v3.edit) },
  { name: "edit_v4", description: "zod 4 schema, z.toJSONSchema.", inputSchema: z.toJSONSchema(v4.edit) },
  { name: "tree_v4", description: "A recursive result.", inputSchema: z.toJSONSchema(z.object({})), outputSchema: z.toJSONSchema(node4) },
];
const out = process.argv[2] ?? fileURLToPath(new URL("../zod-real.json", import.meta.url));
writeFileSync(out, "[\n" + tools.map((t) => "  " + JSON.stringify(t)).join(",\n") + "\n]\n");
