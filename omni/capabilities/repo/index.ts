// repo: list, read, write and search the files of the repository.
//
// Every path taken or returned is relative to the repository root, with "/"
// separators. The root is process.cwd() (omnidev runs programs from the
// repository root), or $OMNI_REPO_ROOT when set. Paths that resolve outside the
// root, directly or through a symbolic link, are refused.
//
// Dependency-free on purpose: only Node built-ins, so the module runs under
// Bun, Node (tsx) and Deno alike.

import { spawn } from "node:child_process";
import type { Stats } from "node:fs";
import {
  lstat,
  mkdir,
  readdir,
  readFile as fsReadFile,
  realpath,
  stat as fsStat,
  writeFile as fsWriteFile,
} from "node:fs/promises";
import * as path from "node:path";

export interface ListFilesOptions {
  /** Only files under this repo-relative directory. */
  dir?: string;
  /** Glob filter; see matchesGlob. */
  glob?: string;
  /** At most this many paths (after sorting). */
  limit?: number;
}

export interface ReadFileOptions {
  /** First line to return, 1-based, inclusive. */
  startLine?: number;
  /** Last line to return, 1-based, inclusive. */
  endLine?: number;
}

export interface SearchOptions {
  /** Only files whose path matches this glob. */
  glob?: string;
  /** Only files under this repo-relative directory. */
  dir?: string;
  /** At most this many matches (default 200). */
  limit?: number;
  /** Match case-insensitively. */
  ignoreCase?: boolean;
}

export interface SearchMatch {
  path: string;
  line: number;
  text: string;
}

export interface FileInfo {
  path: string;
  type: "file" | "directory" | "symlink" | "other";
  size: number;
  modified: string;
}

/** Files larger than this are skipped by search. */
const MAX_SEARCH_FILE_BYTES = 1 << 20;
/** A NUL byte within this many leading bytes marks a file as binary. */
const BINARY_SNIFF_BYTES = 8192;
const DEFAULT_SEARCH_LIMIT = 200;
/** Matching lines longer than this are cut to a window around the match. */
const MAX_MATCH_TEXT = 400;
/** Files read at once by search: enough to overlap I/O, few enough to bound memory. */
const SEARCH_CONCURRENCY = 16;
/** Directories the non-git walk never enters. */
const WALK_SKIP = new Set([".git", "node_modules", ".omni"]);
/** Top-level directories writeFile refuses: git's store and omnidev's own state. */
const WRITE_PROTECTED = [".git", ".omni"];

/** The absolute path of the repository root. */
export function repoRoot(): string {
  const override = process.env.OMNI_REPO_ROOT;
  return path.resolve(override !== undefined && override.trim() !== "" ? override : process.cwd());
}

/**
 * Reports whether a repo-relative path matches a glob: `*` and `?` stay within
 * one path segment, `**` spans segments, `[abc]`/`[!abc]` and `{a,b}` work as in
 * shells. A glob without "/" is matched against the file name alone, so "*.ts"
 * matches TypeScript files at any depth; with "/" it must match the whole path.
 */
export function matchesGlob(filePath: string, glob: string): boolean {
  const normalized = glob.startsWith("./") ? glob.slice(2) : glob;
  const subject = normalized.includes("/") ? filePath : path.posix.basename(filePath);
  return globToRegExp(normalized).test(subject);
}

/**
 * Lists the repository's files, sorted. Inside a git work tree this is what git
 * sees (tracked plus untracked, .gitignore respected); elsewhere a walk that
 * skips .git, node_modules and .omni. `.omni/` is never listed.
 */
export async function listFiles(opts: ListFilesOptions = {}): Promise<string[]> {
  const fn = "listFiles";
  const limit = checkLimit(fn, opts.limit);
  const root = repoRoot();
  let dirRel = "";
  if (opts.dir !== undefined) {
    const dir = await resolvePath(fn, opts.dir);
    const info = await statOrUndefined(dir.abs);
    if (info === undefined) {
      throw new Error(`repo.${fn}: no such directory: "${opts.dir}"`);
    }
    if (!info.isDirectory()) {
      throw new Error(`repo.${fn}: "${opts.dir}" is a file, not a directory`);
    }
    dirRel = dir.rel;
  }
  const glob = opts.glob;
  if (glob !== undefined && (typeof glob !== "string" || glob === "")) {
    throw new Error(`repo.${fn}: glob must be a non-empty string, got ${describe(glob)}`);
  }
  const all = (await gitFiles(root, dirRel)) ?? (await walkFiles(root, dirRel));
  const out: string[] = [];
  for (const file of all) {
    if (file === ".omni" || file.startsWith(".omni/")) continue;
    if (glob !== undefined && !matchesGlob(file, glob)) continue;
    out.push(file);
  }
  out.sort(compareStrings);
  return limit === undefined ? out : out.slice(0, limit);
}

/**
 * Reads a text file (UTF-8). With startLine/endLine, only those lines
 * (1-based, inclusive), line endings kept; a range past the end gives "".
 */
export async function readFile(filePath: string, opts: ReadFileOptions = {}): Promise<string> {
  const fn = "readFile";
  const start = checkLine(fn, "startLine", opts.startLine);
  const end = checkLine(fn, "endLine", opts.endLine);
  if (start !== undefined && end !== undefined && end < start) {
    throw new Error(`repo.${fn}: endLine (${end}) is before startLine (${start})`);
  }
  const target = await resolvePath(fn, filePath);
  const info = await statOrUndefined(target.abs);
  if (info === undefined) {
    throw new Error(`repo.${fn}: no such file: "${target.rel}"`);
  }
  if (info.isDirectory()) {
    throw new Error(`repo.${fn}: "${target.rel}" is a directory; use listFiles({ dir: "${target.rel}" })`);
  }
  const content = await fsReadFile(target.abs, "utf8");
  if (start === undefined && end === undefined) return content;
  const lines = content.split(/(?<=\n)/);
  return lines.slice((start ?? 1) - 1, end ?? lines.length).join("");
}

/**
 * Writes a file, creating missing parent directories, replacing any previous
 * content. Paths inside .git/ or .omni/ are refused.
 */
export async function writeFile(filePath: string, content: string | Uint8Array): Promise<void> {
  const fn = "writeFile";
  if (typeof content !== "string" && !(content instanceof Uint8Array)) {
    throw new Error(`repo.${fn}: content must be a string or a Uint8Array, got ${describe(content)}`);
  }
  const target = await resolvePath(fn, filePath);
  if (target.rel === "") {
    throw new Error(`repo.${fn}: a file path is needed, got the repository root`);
  }
  const top = target.rel.split("/")[0]?.toLowerCase() ?? "";
  if (WRITE_PROTECTED.includes(top)) {
    throw new Error(`repo.${fn}: "${target.rel}" is inside ${top}/, which belongs to ${top === ".git" ? "git" : "omnidev"}; write elsewhere`);
  }
  const info = await statOrUndefined(target.abs);
  if (info?.isDirectory() === true) {
    throw new Error(`repo.${fn}: "${target.rel}" is a directory`);
  }
  await mkdir(path.dirname(target.abs), { recursive: true });
  await fsWriteFile(target.abs, content);
}

/**
 * Reports whether something is at the path: a file, a directory, or a
 * symbolic link (even one leading outside the repository or nowhere).
 */
export async function exists(filePath: string): Promise<boolean> {
  return (await describePath("exists", filePath)) !== undefined;
}

/**
 * Describes what is at the path; throws when nothing is. A symbolic link is
 * followed when it leads to something inside the repository; otherwise the
 * link itself is described (type "symlink").
 */
export async function stat(filePath: string): Promise<FileInfo> {
  const fn = "stat";
  const info = await describePath(fn, filePath);
  if (info === undefined) {
    throw new Error(`repo.${fn}: no such file or directory: "${filePath}"`);
  }
  return info;
}

async function describePath(fn: string, p: string): Promise<FileInfo | undefined> {
  const target = resolveLexically(fn, p);
  const root = repoRoot();
  // The folders leading to the entry must be inside; the entry itself may be a link out.
  await checkRealPath(fn, p, target.rel === "" ? target.abs : path.dirname(target.abs), root);
  let info: Stats;
  try {
    info = await lstat(target.abs);
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
  if (info.isSymbolicLink()) {
    const real = await realpath(target.abs).catch(() => undefined);
    if (real !== undefined && isInside(await realpath(root), real)) info = await fsStat(target.abs);
  }
  return {
    path: target.rel === "" ? "." : target.rel,
    type: info.isFile() ? "file" : info.isDirectory() ? "directory" : info.isSymbolicLink() ? "symlink" : "other",
    size: info.size,
    modified: info.mtime.toISOString(),
  };
}

/**
 * Searches the files listFiles returns, line by line. A string pattern is
 * matched literally; pass a RegExp for a regular expression. Binary files,
 * files over 1 MiB and symbolic links are skipped. Matches come sorted by
 * path, then line.
 */
export async function search(pattern: string | RegExp, opts: SearchOptions = {}): Promise<SearchMatch[]> {
  const fn = "search";
  const limit = checkLimit(fn, opts.limit) ?? DEFAULT_SEARCH_LIMIT;
  const re = toRegExp(fn, pattern, opts.ignoreCase === true);
  // Whole-file pre-test: most files do not match, and one test over the text is much
  // cheaper than splitting it into lines. With "m", ^ and $ still anchor at line ends.
  const anyLine = re.flags.includes("m") ? re : new RegExp(re.source, re.flags + "m");
  const listOpts: ListFilesOptions = {};
  if (opts.dir !== undefined) listOpts.dir = opts.dir;
  if (opts.glob !== undefined) listOpts.glob = opts.glob;
  const files = await listFiles(listOpts);
  const root = repoRoot();
  const matches: SearchMatch[] = [];
  for (let i = 0; i < files.length && matches.length < limit; i += SEARCH_CONCURRENCY) {
    const batch = files.slice(i, i + SEARCH_CONCURRENCY);
    const texts = await Promise.all(batch.map((file) => readSearchable(path.join(root, file))));
    for (let j = 0; j < batch.length && matches.length < limit; j++) {
      const text = texts[j];
      const file = batch[j];
      if (text === undefined || file === undefined || !anyLine.test(text)) continue;
      const lines = text.split("\n");
      for (let n = 0; n < lines.length && matches.length < limit; n++) {
        const line = (lines[n] ?? "").replace(/\r$/, "");
        const m = re.exec(line);
        if (m !== null) {
          matches.push({ path: file, line: n + 1, text: excerpt(line, m.index) });
        }
      }
    }
  }
  return matches;
}

// ---- paths -----------------------------------------------------------------

interface Resolved {
  /** Absolute path. */
  abs: string;
  /** Repo-relative path with "/" separators; "" for the root itself. */
  rel: string;
}

/** Resolves a caller's path inside the root, refusing anything that escapes it. */
async function resolvePath(fn: string, p: string): Promise<Resolved> {
  const target = resolveLexically(fn, p);
  await checkRealPath(fn, p, target.abs, repoRoot());
  return target;
}

/** Resolves without looking at the disk: refuses "..", and absolute paths outside the root. */
function resolveLexically(fn: string, p: string): Resolved {
  if (typeof p !== "string" || p === "") {
    throw new Error(`repo.${fn}: path must be a non-empty string, got ${describe(p)}`);
  }
  if (p.includes("\0")) {
    throw new Error(`repo.${fn}: path contains a NUL byte`);
  }
  const root = repoRoot();
  const abs = path.resolve(root, p);
  if (!isInside(root, abs)) {
    throw escapeError(fn, p, root);
  }
  return { abs, rel: path.relative(root, abs).split(path.sep).join("/") };
}

/**
 * Follows symbolic links: the deepest existing ancestor of abs (abs itself
 * when it exists) must really be inside the real root. A dangling link is
 * refused, since writing through it could create a file anywhere.
 */
async function checkRealPath(fn: string, p: string, abs: string, root: string): Promise<void> {
  const realRoot = await realpath(root);
  let cur = abs;
  for (;;) {
    let real: string | undefined;
    try {
      real = await realpath(cur);
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
    if (real !== undefined) {
      if (!isInside(realRoot, real)) throw escapeError(fn, p, root, "through a symbolic link");
      return;
    }
    const link = await lstat(cur).catch(() => undefined);
    if (link?.isSymbolicLink() === true) {
      throw new Error(`repo.${fn}: "${p}" goes through a dangling symbolic link (${path.relative(root, cur)})`);
    }
    const parent = path.dirname(cur);
    if (parent === cur) return;
    cur = parent;
  }
}

function isInside(root: string, abs: string): boolean {
  const rel = path.relative(root, abs);
  return rel === "" || (rel !== ".." && !rel.startsWith(".." + path.sep) && !path.isAbsolute(rel));
}

function escapeError(fn: string, p: string, root: string, how = ""): Error {
  const via = how === "" ? "" : ` ${how}`;
  return new Error(
    `repo.${fn}: "${p}" is outside the repository root (${root})${via}; use a path relative to the root, like "src/index.ts"`,
  );
}

// ---- listing ---------------------------------------------------------------

/** Files according to git, or undefined when git is missing or root is not in a work tree. */
async function gitFiles(root: string, dirRel: string): Promise<string[] | undefined> {
  const spec = dirRel === "" ? [] : ["--", dirRel];
  const base = ["--literal-pathspecs", "-c", "core.quotePath=false", "ls-files", "-z"];
  const [listed, deleted] = await Promise.all([
    run("git", [...base, "--cached", "--others", "--exclude-standard", ...spec], root),
    run("git", [...base, "--deleted", ...spec], root),
  ]);
  if (listed === undefined || listed.code !== 0) return undefined;
  const gone = new Set(deleted !== undefined && deleted.code === 0 ? splitNul(deleted.stdout) : []);
  const files = new Set<string>();
  for (const file of splitNul(listed.stdout)) {
    if (!gone.has(file)) files.add(file);
  }
  return [...files];
}

async function walkFiles(root: string, dirRel: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(rel === "" ? root : path.join(root, rel), { withFileTypes: true }).catch(
      () => [],
    );
    for (const entry of entries) {
      const child = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!WALK_SKIP.has(entry.name)) await walk(child);
      } else {
        out.push(child);
      }
    }
  };
  await walk(dirRel);
  return out;
}

interface RunResult {
  code: number | null;
  stdout: Buffer;
}

/** Runs a command; undefined when it cannot be started (not installed). */
function run(cmd: string, args: string[], cwd: string): Promise<RunResult | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const child = spawn(cmd, args, { cwd, stdio: ["ignore", "pipe", "ignore"] });
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.on("error", () => resolve(undefined));
    child.on("close", (code) => resolve({ code, stdout: Buffer.concat(chunks) }));
  });
}

function splitNul(buf: Buffer): string[] {
  return buf.toString("utf8").split("\0").filter((s) => s !== "");
}

// ---- search ----------------------------------------------------------------

/** The file's text, or undefined when it is binary, too large or unreadable. */
async function readSearchable(abs: string): Promise<string | undefined> {
  try {
    // lstat: symbolic links are skipped, so search never reads outside the root.
    const info = await lstat(abs);
    if (!info.isFile() || info.size > MAX_SEARCH_FILE_BYTES) return undefined;
    const buf = await fsReadFile(abs);
    if (buf.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return undefined;
    return buf.toString("utf8");
  } catch {
    return undefined;
  }
}

function toRegExp(fn: string, pattern: string | RegExp, ignoreCase: boolean): RegExp {
  if (pattern instanceof RegExp) {
    // Drop g/y: they make test/exec stateful across lines.
    let flags = pattern.flags.replace(/[gy]/g, "");
    if (ignoreCase && !flags.includes("i")) flags += "i";
    return new RegExp(pattern.source, flags);
  }
  if (typeof pattern !== "string" || pattern === "") {
    throw new Error(`repo.${fn}: pattern must be a non-empty string or a RegExp, got ${describe(pattern)}`);
  }
  return new RegExp(escapeRegExp(pattern), ignoreCase ? "i" : "");
}

function excerpt(line: string, at: number): string {
  if (line.length <= MAX_MATCH_TEXT) return line;
  const start = Math.max(0, Math.min(at - 100, line.length - MAX_MATCH_TEXT));
  const end = start + MAX_MATCH_TEXT;
  return (start > 0 ? "…" : "") + line.slice(start, end) + (end < line.length ? "…" : "");
}

// ---- globs -----------------------------------------------------------------

const globCache = new Map<string, RegExp>();

function globToRegExp(glob: string): RegExp {
  const cached = globCache.get(glob);
  if (cached !== undefined) return cached;
  let re = "";
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob.charAt(i);
    if (c === "*") {
      if (glob.charAt(i + 1) === "*") {
        const slashAfter = glob.charAt(i + 2) === "/";
        re += slashAfter ? "(?:.*/)?" : ".*";
        i += slashAfter ? 2 : 1;
      } else {
        re += "[^/]*";
      }
    } else if (c === "?") {
      re += "[^/]";
    } else if (c === "[") {
      const close = glob.indexOf("]", i + 2);
      if (close === -1) {
        re += "\\[";
      } else {
        let body = glob.slice(i + 1, close);
        const negate = body.startsWith("!") || body.startsWith("^");
        if (negate) body = body.slice(1);
        re += `[${negate ? "^" : ""}${body.replace(/\\/g, "\\\\")}]`;
        i = close;
      }
    } else if (c === "{") {
      braces++;
      re += "(?:";
    } else if (c === "}" && braces > 0) {
      braces--;
      re += ")";
    } else if (c === "," && braces > 0) {
      re += "|";
    } else {
      re += escapeRegExp(c);
    }
  }
  re += ")".repeat(braces);
  const compiled = new RegExp(`^${re}$`);
  globCache.set(glob, compiled);
  return compiled;
}

// ---- small helpers ---------------------------------------------------------

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function checkLimit(fn: string, limit: number | undefined): number | undefined {
  if (limit === undefined) return undefined;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new Error(`repo.${fn}: limit must be a positive integer, got ${describe(limit)}`);
  }
  return limit;
}

function checkLine(fn: string, name: string, n: number | undefined): number | undefined {
  if (n === undefined) return undefined;
  if (!Number.isInteger(n) || n < 1) {
    throw new Error(`repo.${fn}: ${name} must be a positive integer (lines count from 1), got ${describe(n)}`);
  }
  return n;
}

async function statOrUndefined(abs: string): Promise<Stats | undefined> {
  try {
    return await fsStat(abs);
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
}

function isMissing(err: unknown): boolean {
  const code = typeof err === "object" && err !== null && "code" in err ? err.code : undefined;
  return code === "ENOENT" || code === "ENOTDIR";
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function describe(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  return `${typeof v} ${String(v)}`;
}
