// tasks: a small persistent task list for an agent's work in progress.
//
// The list lives in one JSON file: $TASKS_FILE, default .omni/state/tasks.json,
// a relative path being taken from the repository root (process.cwd(), or
// $OMNI_REPO_ROOT when set). A missing file is an empty list. Every change
// rewrites the file atomically (temporary file + rename), so a crash never
// leaves half a file behind.
//
// Dependency-free on purpose: only Node built-ins, so the module runs under
// Bun, Node (tsx) and Deno alike.

import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, unlink } from "node:fs/promises";
import * as path from "node:path";

export type TaskStatus = "open" | "done";

export interface Task {
  id: number;
  title: string;
  status: TaskStatus;
  notes?: string;
  tags: string[];
  createdAt: string;
  updatedAt: string;
}

export interface AddTaskOptions {
  notes?: string;
  tags?: string[];
}

export interface TaskFilter {
  status?: TaskStatus;
  tag?: string;
}

export interface TaskPatch {
  title?: string;
  /** null or "" removes the notes. */
  notes?: string | null;
  tags?: string[];
  status?: TaskStatus;
}

/** The file's format. nextId only grows, so a removed task's id is never reused. */
interface TaskFile {
  version: 1;
  nextId: number;
  tasks: Task[];
}

const DEFAULT_TASKS_FILE = ".omni/state/tasks.json";
const STATUSES: readonly TaskStatus[] = ["open", "done"];
const PATCH_KEYS = ["title", "notes", "tags", "status"] as const;

/** Absolute path of the task file in use. */
export function tasksFilePath(): string {
  const configured = process.env.TASKS_FILE;
  return path.resolve(repoRoot(), configured !== undefined && configured.trim() !== "" ? configured.trim() : DEFAULT_TASKS_FILE);
}

/** Adds an open task and returns it. */
export async function addTask(title: string, opts: AddTaskOptions = {}): Promise<Task> {
  const fn = "addTask";
  const cleanTitle = checkTitle(fn, title);
  const notes = checkNotes(fn, opts.notes);
  const tags = opts.tags === undefined ? [] : checkTags(fn, opts.tags);
  return mutate((data) => {
    const now = timestamp();
    const task: Task = { id: data.nextId, title: cleanTitle, status: "open", tags, createdAt: now, updatedAt: now };
    if (notes !== undefined && notes !== "") task.notes = notes;
    data.tasks.push(task);
    data.nextId++;
    return task;
  });
}

/** Tasks sorted by id, optionally only those with a status and/or a tag. */
export async function listTasks(filter: TaskFilter = {}): Promise<Task[]> {
  const fn = "listTasks";
  const status = filter.status === undefined ? undefined : checkStatus(fn, filter.status);
  const tag = filter.tag === undefined ? undefined : checkTag(fn, filter.tag);
  return serialize(async () => {
    const data = await load(tasksFilePath());
    return data.tasks.filter(
      (t) => (status === undefined || t.status === status) && (tag === undefined || t.tags.includes(tag)),
    );
  });
}

/** The task with this id; throws if there is none. */
export async function getTask(id: number): Promise<Task> {
  const fn = "getTask";
  checkId(fn, id);
  return serialize(async () => {
    const file = tasksFilePath();
    return find(fn, file, await load(file), id);
  });
}

/** Marks a task done (no change if it already is) and returns it. */
export async function completeTask(id: number): Promise<Task> {
  return setStatus("completeTask", id, "done");
}

/** Marks a task open again (no change if it already is) and returns it. */
export async function reopenTask(id: number): Promise<Task> {
  return setStatus("reopenTask", id, "open");
}

/** Changes a task's title, notes, tags and/or status and returns it. */
export async function updateTask(id: number, patch: TaskPatch): Promise<Task> {
  const fn = "updateTask";
  checkId(fn, id);
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) {
    throw new Error(`tasks.${fn}: patch must be an object like { title: "..." }, got ${describe(patch)}`);
  }
  const unknown = Object.keys(patch).filter((k) => !(PATCH_KEYS as readonly string[]).includes(k));
  if (unknown.length > 0) {
    throw new Error(`tasks.${fn}: unknown field(s) ${unknown.map((k) => `"${k}"`).join(", ")}; a patch may set ${PATCH_KEYS.join(", ")}`);
  }
  const title = patch.title === undefined ? undefined : checkTitle(fn, patch.title);
  const notes = patch.notes === undefined || patch.notes === null ? patch.notes : checkNotes(fn, patch.notes);
  const tags = patch.tags === undefined ? undefined : checkTags(fn, patch.tags);
  const status = patch.status === undefined ? undefined : checkStatus(fn, patch.status);
  return mutate((data, file) => {
    const task = find(fn, file, data, id);
    const before = JSON.stringify(task);
    if (title !== undefined) task.title = title;
    if (notes === null || notes === "") delete task.notes;
    else if (notes !== undefined) task.notes = notes;
    if (tags !== undefined) task.tags = tags;
    if (status !== undefined) task.status = status;
    if (JSON.stringify(task) !== before) task.updatedAt = timestamp();
    return task;
  });
}

/** Deletes a task and returns it. Its id is not reused. */
export async function removeTask(id: number): Promise<Task> {
  const fn = "removeTask";
  checkId(fn, id);
  return mutate((data, file) => {
    const task = find(fn, file, data, id);
    data.tasks = data.tasks.filter((t) => t.id !== id);
    return task;
  });
}

async function setStatus(fn: string, id: number, status: TaskStatus): Promise<Task> {
  checkId(fn, id);
  return mutate((data, file) => {
    const task = find(fn, file, data, id);
    if (task.status !== status) {
      task.status = status;
      task.updatedAt = timestamp();
    }
    return task;
  });
}

// ---- storage ---------------------------------------------------------------

/**
 * Operations of one program run one at a time, so that e.g.
 * Promise.all([addTask("a"), addTask("b")]) keeps both tasks. (omnidev runs one
 * program per repository at a time, so other writers are not expected.)
 */
let queue: Promise<unknown> = Promise.resolve();

function serialize<T>(op: () => Promise<T>): Promise<T> {
  const result = queue.then(op, op);
  queue = result.catch(() => undefined);
  return result;
}

/** Loads the file, applies change, and saves the file if change returned without throwing. */
function mutate<T>(change: (data: TaskFile, file: string) => T): Promise<T> {
  return serialize(async () => {
    const file = tasksFilePath();
    const data = await load(file);
    const result = change(data, file);
    await save(file, data);
    return result;
  });
}

async function load(file: string): Promise<TaskFile> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if (errorCode(err) === "ENOENT") return { version: 1, nextId: 1, tasks: [] };
    throw new Error(`tasks: cannot read ${display(file)}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (text.trim() === "") return { version: 1, nextId: 1, tasks: [] };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw corrupt(file, `it is not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  return parseTaskFile(file, raw);
}

/** Validates the parsed file. A bare array of tasks is accepted too. */
function parseTaskFile(file: string, raw: unknown): TaskFile {
  let rawTasks: unknown;
  let rawNextId: unknown;
  if (Array.isArray(raw)) {
    rawTasks = raw;
  } else if (isRecord(raw)) {
    if (raw.version !== undefined && raw.version !== 1) {
      throw corrupt(file, `its version is ${describe(raw.version)}; this module reads version 1`);
    }
    rawTasks = raw.tasks ?? [];
    rawNextId = raw.nextId;
  } else {
    throw corrupt(file, `it holds ${describe(raw)} instead of an object { "version": 1, "nextId": 1, "tasks": [] }`);
  }
  if (!Array.isArray(rawTasks)) {
    throw corrupt(file, `"tasks" is ${describe(rawTasks)}, not an array`);
  }
  const seen = new Set<number>();
  const tasks = rawTasks.map((t: unknown, i: number) => {
    const task = parseTask(file, t, i);
    if (seen.has(task.id)) throw corrupt(file, `task id ${task.id} appears twice`);
    seen.add(task.id);
    return task;
  });
  tasks.sort((a, b) => a.id - b.id);
  let nextId = tasks.reduce((n, t) => Math.max(n, t.id + 1), 1);
  if (rawNextId !== undefined) {
    if (!isPositiveInteger(rawNextId)) throw corrupt(file, `"nextId" is ${describe(rawNextId)}, not a positive integer`);
    nextId = Math.max(nextId, rawNextId);
  }
  return { version: 1, nextId, tasks };
}

function parseTask(file: string, raw: unknown, index: number): Task {
  const where = `tasks[${index}]`;
  if (!isRecord(raw)) throw corrupt(file, `${where} is ${describe(raw)}, not an object`);
  const { id, title, status, notes, tags, createdAt, updatedAt } = raw;
  if (!isPositiveInteger(id)) throw corrupt(file, `${where}.id is ${describe(id)}, not a positive integer`);
  if (typeof title !== "string") throw corrupt(file, `${where}.title is ${describe(title)}, not a string`);
  if (status !== "open" && status !== "done") {
    throw corrupt(file, `${where}.status is ${describe(status)}; it must be "open" or "done"`);
  }
  if (notes !== undefined && typeof notes !== "string") {
    throw corrupt(file, `${where}.notes is ${describe(notes)}, not a string`);
  }
  let tagList: string[] = [];
  if (tags !== undefined) {
    if (!Array.isArray(tags)) throw corrupt(file, `${where}.tags is ${describe(tags)}, not an array of strings`);
    const bad = tags.findIndex((t: unknown) => typeof t !== "string");
    if (bad !== -1) throw corrupt(file, `${where}.tags[${bad}] is ${describe(tags[bad])}, not a string`);
    tagList = tags.map(String);
  }
  if (typeof createdAt !== "string") throw corrupt(file, `${where}.createdAt is ${describe(createdAt)}, not a string`);
  if (updatedAt !== undefined && typeof updatedAt !== "string") {
    throw corrupt(file, `${where}.updatedAt is ${describe(updatedAt)}, not a string`);
  }
  const task: Task = { id, title, status, tags: tagList, createdAt, updatedAt: updatedAt ?? createdAt };
  if (notes !== undefined && notes !== "") task.notes = notes;
  return task;
}

/** Writes the whole file atomically: a temporary file in the same folder, then rename. */
async function save(file: string, data: TaskFile): Promise<void> {
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  const body = JSON.stringify({ version: data.version, nextId: data.nextId, tasks: data.tasks }, null, 2) + "\n";
  try {
    const handle = await open(tmp, "w", 0o644);
    try {
      await handle.writeFile(body, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw new Error(`tasks: cannot write ${display(file)}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function corrupt(file: string, problem: string): Error {
  return new Error(
    `tasks: ${display(file)} is corrupt: ${problem}. Fix the file by hand (its format is in the ` +
      `tasks capability's "storage" doc), or move it aside to start with an empty list.`,
  );
}

function find(fn: string, file: string, data: TaskFile, id: number): Task {
  const task = data.tasks.find((t) => t.id === id);
  if (task === undefined) {
    const ids = data.tasks.length === 0 ? "the list is empty" : `existing ids: ${summarizeIds(data.tasks)}`;
    throw new Error(`tasks.${fn}: no task with id ${id} in ${display(file)} (${ids}); call listTasks() to see them`);
  }
  return task;
}

// ---- validation ------------------------------------------------------------

function checkId(fn: string, id: unknown): asserts id is number {
  if (!isPositiveInteger(id)) {
    throw new Error(`tasks.${fn}: id must be a positive integer (a task's id), got ${describe(id)}`);
  }
}

function checkTitle(fn: string, title: unknown): string {
  if (typeof title !== "string" || title.trim() === "") {
    throw new Error(`tasks.${fn}: title must be a non-empty string, got ${describe(title)}`);
  }
  return title.trim();
}

function checkNotes(fn: string, notes: unknown): string | undefined {
  if (notes === undefined) return undefined;
  if (typeof notes !== "string") throw new Error(`tasks.${fn}: notes must be a string, got ${describe(notes)}`);
  return notes.trim();
}

function checkTags(fn: string, tags: unknown): string[] {
  if (!Array.isArray(tags)) throw new Error(`tasks.${fn}: tags must be an array of strings, got ${describe(tags)}`);
  const out: string[] = [];
  for (const tag of tags) {
    const clean = checkTag(fn, tag);
    if (!out.includes(clean)) out.push(clean);
  }
  return out;
}

function checkTag(fn: string, tag: unknown): string {
  if (typeof tag !== "string" || tag.trim() === "") {
    throw new Error(`tasks.${fn}: a tag must be a non-empty string, got ${describe(tag)}`);
  }
  return tag.trim();
}

function checkStatus(fn: string, status: unknown): TaskStatus {
  const found = STATUSES.find((s) => s === status);
  if (found === undefined) throw new Error(`tasks.${fn}: status must be "open" or "done", got ${describe(status)}`);
  return found;
}

// ---- small helpers ---------------------------------------------------------

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isPositiveInteger(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v > 0;
}

function errorCode(err: unknown): unknown {
  return typeof err === "object" && err !== null && "code" in err ? err.code : undefined;
}

function timestamp(): string {
  return new Date().toISOString();
}

/** The repository root: process.cwd(), or $OMNI_REPO_ROOT when set. */
function repoRoot(): string {
  const override = process.env.OMNI_REPO_ROOT;
  return path.resolve(override !== undefined && override.trim() !== "" ? override : process.cwd());
}

/** The file as shown in messages: repo-relative when inside the repository. */
function display(file: string): string {
  const rel = path.relative(repoRoot(), file);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel.split(path.sep).join("/") : file;
}

function summarizeIds(tasks: Task[]): string {
  const ids = tasks.map((t) => t.id);
  return ids.length <= 20 ? ids.join(", ") : `${ids.slice(0, 20).join(", ")}, … (${ids.length} in all)`;
}

function describe(v: unknown): string {
  if (v === undefined) return "undefined";
  if (v === null) return "null";
  if (typeof v === "string") return JSON.stringify(v.length > 60 ? v.slice(0, 60) + "…" : v);
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  return `${typeof v} ${String(v)}`;
}
