// Tests of the tasks module. Run from the repository root: bun test ./omni/capabilities
// Every test works in its own temporary directory (OMNI_REPO_ROOT, TASKS_FILE).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import {
  addTask,
  completeTask,
  getTask,
  listTasks,
  removeTask,
  reopenTask,
  tasksFilePath,
  updateTask,
  type TaskPatch,
} from "./index.ts";

let root = "";
const saved = { root: process.env.OMNI_REPO_ROOT, file: process.env.TASKS_FILE };

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), "omni-tasks-test-"));
  process.env.OMNI_REPO_ROOT = root;
  delete process.env.TASKS_FILE;
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  restore("OMNI_REPO_ROOT", saved.root);
  restore("TASKS_FILE", saved.file);
});

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

function file(): string {
  return path.join(root, ".omni/state/tasks.json");
}

describe("storage", () => {
  test("defaults to .omni/state/tasks.json under the root", () => {
    expect(tasksFilePath()).toBe(file());
  });

  test("TASKS_FILE, relative to the root or absolute", () => {
    process.env.TASKS_FILE = "var/list.json";
    expect(tasksFilePath()).toBe(path.join(root, "var/list.json"));
    process.env.TASKS_FILE = path.join(root, "abs.json");
    expect(tasksFilePath()).toBe(path.join(root, "abs.json"));
  });

  test("a missing file is an empty list and is not created by reading", async () => {
    expect(await listTasks()).toEqual([]);
    expect(existsSync(file())).toBe(false);
  });

  test("writes create the folder, leave no temporary file, and keep the format", async () => {
    await addTask("one");
    const onDisk: unknown = JSON.parse(readFileSync(file(), "utf8"));
    expect(onDisk).toMatchObject({ version: 1, nextId: 2, tasks: [{ id: 1, title: "one", status: "open", tags: [] }] });
    expect(readdirSync(path.dirname(file())).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  test("a corrupt file is a clear error naming the file, and is left untouched", async () => {
    await addTask("first");
    writeFileSync(file(), "{ nope");
    const message = /^tasks: \.omni\/state\/tasks\.json is corrupt: it is not valid JSON.*move it aside/;
    await expect(listTasks()).rejects.toThrow(message);
    await expect(addTask("x")).rejects.toThrow(message);
    expect(readFileSync(file(), "utf8")).toBe("{ nope");
  });

  test("a structurally wrong file says where", async () => {
    writeFileSync(mkParents(file()), JSON.stringify({ tasks: [{ id: 1, title: "x", status: "closed", createdAt: "t" }] }));
    await expect(listTasks()).rejects.toThrow(/tasks\[0\]\.status is "closed"; it must be "open" or "done"/);
  });

  test("a bare array and missing optional fields are accepted", async () => {
    writeFileSync(mkParents(file()), JSON.stringify([{ id: 4, title: "old", status: "done", createdAt: "2024-01-01T00:00:00.000Z" }]));
    expect(await listTasks()).toEqual([
      { id: 4, title: "old", status: "done", tags: [], createdAt: "2024-01-01T00:00:00.000Z", updatedAt: "2024-01-01T00:00:00.000Z" },
    ]);
    expect((await addTask("new")).id).toBe(5);
  });
});

describe("operations", () => {
  test("addTask trims, dedupes tags and numbers tasks", async () => {
    const a = await addTask("  Write docs ", { notes: "n", tags: ["docs", "docs ", "x"] });
    expect(a).toMatchObject({ id: 1, title: "Write docs", status: "open", notes: "n", tags: ["docs", "x"] });
    expect(a.createdAt).toBe(a.updatedAt);
    expect("notes" in (await addTask("no notes"))).toBe(false);
  });

  test("concurrent calls in one program do not lose updates", async () => {
    const added = await Promise.all(["a", "b", "c", "d"].map((t) => addTask(t)));
    expect(added.map((t) => t.id)).toEqual([1, 2, 3, 4]);
    expect((await listTasks()).length).toBe(4);
  });

  test("listTasks filters by status and tag", async () => {
    await addTask("a", { tags: ["x"] });
    await addTask("b", { tags: ["y"] });
    await completeTask(2);
    expect((await listTasks({ status: "done" })).map((t) => t.id)).toEqual([2]);
    expect((await listTasks({ tag: "x" })).map((t) => t.id)).toEqual([1]);
    expect(await listTasks({ status: "open", tag: "y" })).toEqual([]);
  });

  test("completeTask, reopenTask and getTask", async () => {
    await addTask("a");
    expect((await completeTask(1)).status).toBe("done");
    expect((await getTask(1)).status).toBe("done");
    expect((await reopenTask(1)).status).toBe("open");
  });

  test("updateTask changes only what it is given", async () => {
    await addTask("a", { notes: "n", tags: ["x"] });
    const t = await updateTask(1, { title: "b", notes: null });
    expect(t).toMatchObject({ title: "b", tags: ["x"], status: "open" });
    expect("notes" in t).toBe(false);
    expect(await updateTask(1, { tags: [], status: "done" })).toMatchObject({ tags: [], status: "done" });
  });

  test("removeTask returns the task and its id is not reused", async () => {
    await addTask("a");
    await addTask("b");
    expect((await removeTask(2)).title).toBe("b");
    expect((await addTask("c")).id).toBe(3);
  });
});

describe("errors", () => {
  test("unknown ids", async () => {
    await expect(getTask(1)).rejects.toThrow(/tasks\.getTask: no task with id 1 in .*\(the list is empty\)/);
    await addTask("a");
    for (const op of [completeTask, reopenTask, removeTask, getTask]) {
      await expect(op(9)).rejects.toThrow(/no task with id 9 .*existing ids: 1/);
    }
    await expect(updateTask(9, { title: "x" })).rejects.toThrow(/tasks\.updateTask: no task with id 9/);
  });

  test("invalid arguments", async () => {
    await addTask("a");
    await expect(addTask("  ")).rejects.toThrow(/title must be a non-empty string/);
    await expect(getTask(0)).rejects.toThrow(/id must be a positive integer/);
    await expect(updateTask(1, { state: "done" } as unknown as TaskPatch)).rejects.toThrow(/unknown field\(s\) "state"/);
    await expect(updateTask(1, { status: "closed" } as unknown as TaskPatch)).rejects.toThrow(/status must be "open" or "done"/);
    await expect(listTasks({ tag: "" })).rejects.toThrow(/a tag must be a non-empty string/);
    expect((await listTasks()).length).toBe(1);
  });
});

function mkParents(p: string): string {
  mkdirSync(path.dirname(p), { recursive: true });
  return p;
}
