/**
 * A persistent task list, kept in $TASKS_FILE (default .omni/state/tasks.json).
 * It survives between programs: use it to plan multi-step work and to pick up
 * where a previous run left off. Unknown ids and invalid arguments throw an
 * Error that says what was wrong.
 */

export type TaskStatus = "open" | "done";

export interface Task {
  /** Positive integer, assigned in order; never reused after removeTask. */
  id: number;
  title: string;
  status: TaskStatus;
  /** Free text; absent when there are none. */
  notes?: string;
  /** Trimmed, without duplicates; [] when none. */
  tags: string[];
  /** ISO 8601 timestamps. */
  createdAt: string;
  updatedAt: string;
}

export interface AddTaskOptions {
  notes?: string;
  tags?: string[];
}

export interface TaskFilter {
  /** Only tasks with this status. */
  status?: TaskStatus;
  /** Only tasks carrying this tag (exact match). */
  tag?: string;
}

export interface TaskPatch {
  title?: string;
  /** New notes; null or "" removes them. */
  notes?: string | null;
  /** Replaces the whole tag list. */
  tags?: string[];
  status?: TaskStatus;
}

/**
 * Adds an open task and returns it (with its new id).
 * @example const t = await addTask("Fix flaky watcher test", { tags: ["tests"] })
 */
export function addTask(title: string, opts?: AddTaskOptions): Promise<Task>;

/**
 * Tasks sorted by id, optionally filtered. No filter: all tasks.
 * @example await listTasks({ status: "open", tag: "tests" })
 */
export function listTasks(filter?: TaskFilter): Promise<Task[]>;

/** The task with this id. Throws if there is none. */
export function getTask(id: number): Promise<Task>;

/** Marks the task done and returns it (no change if already done). */
export function completeTask(id: number): Promise<Task>;

/** Marks the task open again and returns it (no change if already open). */
export function reopenTask(id: number): Promise<Task>;

/**
 * Changes some fields of a task and returns it. Other fields stay as they are;
 * a field name the patch does not know (a typo) throws.
 * @example await updateTask(3, { notes: "blocked on #12", tags: ["blocked"] })
 */
export function updateTask(id: number, patch: TaskPatch): Promise<Task>;

/** Deletes the task and returns what it was. */
export function removeTask(id: number): Promise<Task>;

/** Absolute path of the task file in use. */
export function tasksFilePath(): string;
