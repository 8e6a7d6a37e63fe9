// A program against the declarations generated from testdata: tsc --strict
// must accept every call, and reject each line marked @ts-expect-error.
import * as fixture from "fixture";
import * as fs from "filesystem";
import * as memory from "memory";
import * as everything from "everything";
import * as thinking from "sequential-thinking";
import * as pydantic from "pydantic";
import * as zod from "zod";
import * as pydanticReal from "pydantic-real";
import * as zodReal from "zod-real";

export async function main() {
  const echoed = await fixture.echo({ message: "hi" });
  echoed.text satisfies string;
  echoed.content[0] satisfies fixture.ContentItem | undefined;
  await fixture.getSum_2();
  await fixture._3dRender({ shape: { kind: "square", side: 2 }, mode: 3, meta: { a: "b" }, "content-type": "x" });
  // @ts-expect-error a circle has no side
  await fixture._3dRender({ shape: { kind: "circle", side: 2 } });
  const weather = await fixture.getStructured({ location: "Paris" });
  weather.temperature satisfies number;

  const file = await fs.readTextFile({ path: "README.md", head: 3 });
  file.content satisfies string;
  // @ts-expect-error path is required
  await fs.readTextFile({});
  await fs.editFile({ path: "a", edits: [{ oldText: "x", newText: "y" }], dryRun: true });
  // @ts-expect-error edits hold oldText and newText
  await fs.editFile({ path: "a", edits: [{ oldText: "x" }] });
  await fs.listAllowedDirectories();

  const graph = await memory.readGraph();
  graph.entities[0]?.observations satisfies string[] | undefined;
  await memory.createEntities({ entities: [{ name: "n", entityType: "t", observations: [] }] });
  await everything.getSum({ a: 1, b: 2 });
  // @ts-expect-error b is a number
  await everything.getSum({ a: 1, b: "2" });
  await thinking.sequentialthinking({ thought: "t", nextThoughtNeeded: false, thoughtNumber: 1, totalThoughts: 1 });

  const found = await pydantic.search({ query: "q", filter: { field: "f", op: "eq", value: null }, coords: [1, 2], extra: { n: 1 }, literal: true });
  found.hits[0]?.score satisfies number | undefined;
  // @ts-expect-error op is one of eq, ne, lt, gt
  await pydantic.search({ query: "q", filter: { field: "f", op: "like", value: 1 } });
  // @ts-expect-error coords are two numbers
  await pydantic.search({ query: "q", coords: [1, 2, 3] });
  (await pydantic.count({ text: "x" })).result satisfies number;
  await pydantic.adopt({ pet: { pet_type: "dog", barks: 1 } });
  const boss: pydantic.Employee = { name: "a", reports: [{ name: "b", team: { name: "t", lead: { name: "c" } } }] };
  const chart = await pydantic.orgChart({ root: boss });
  chart.tree.children[0]?.children satisfies pydantic.Node[] | undefined;
  // @ts-expect-error a report has a name
  await pydantic.orgChart({ root: { name: "a", reports: [{}] } });
  (await pydantic.convert({ model: { when: "now" } })).list.next?.next satisfies pydantic.Node_2 | null | undefined;

  await zod.edit({ edits: [], primary: { oldText: "a", newText: "b" }, range: [0, 1], args: ["a", 1, 2], flags: { strict: true, depth: 2 }, "@type": "Edit", point: { x: 1, y: [2, "3"] }, name: null, legacy: null });
  // @ts-expect-error a flag other than strict is a number
  await zod.edit({ edits: [], flags: { other: "x" } });
  const tree = await zod.tree({ tree: { value: 1, kids: [{ value: 2, kids: [] }] } });
  tree.children[0]?.children[0]?.name satisfies string | undefined;
  await zod.jsonValue({ value: { a: [1, "b", null, { c: true }] }, pair: ["a", 1], head: ["a", true, false] });
  // @ts-expect-error undefined is not JSON
  await zod.jsonValue({ value: { a: undefined } });

  await pydanticReal.draw({ points: [{ x: 1 }], pair: [1, "a"], color: "green", labels: { a: 1 }, mode: 3, note: null });
  // @ts-expect-error pair is a number and a string
  await pydanticReal.draw({ points: [], pair: ["a", 1] });
  const walked = await pydanticReal.walk({ tree: { label: "root", children: [{ label: "kid", parent: null }] } });
  walked.children?.[0]?.parent?.label satisfies string | undefined;
  await pydanticReal.adopt({ pet: { kind: "cat" } });
  // @ts-expect-error a cat does not bark
  await pydanticReal.adopt({ pet: { kind: "cat", good: true } });
  (await pydanticReal.stamp({ stamp: { at: "2020" } })).year satisfies number;
  (await pydanticReal.page()).items[0]?.x satisfies number | undefined;

  await zodReal.editV3({
    edits: [], kind: "dir", also: null, range: [1, 2], args: ["a"], labels: {}, flags: { strict: false, n: 1 },
    literal: "x", mixed: "a", shape: { type: "square", side: 1 }, tree: { name: "t", kids: [] },
  });
  // @ts-expect-error kind is file or dir
  await zodReal.editV3({ kind: "link" });
  const v4 = {
    edits: [], pair: ["a", 1], head: ["a"], nullable: null, strict: { a: "a" }, loose: { a: "a" }, labels: {},
    tree: { name: "t", kids: [] }, json: [1, { a: null }],
  } satisfies Parameters<typeof zodReal.editV4>[0];
  await zodReal.editV4(v4);
  (await zodReal.treeV4()).kids[0]?.kids satisfies zodReal.TreeV4Result[] | undefined;

  await fixture.call("echo", { message: "hi" });
  fixture.tools[0]?.name satisfies string | undefined;
}
