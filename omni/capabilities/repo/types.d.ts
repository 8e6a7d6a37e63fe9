/**
 * Every path is relative to the repository root, with "/" separators
 * ("src/app.ts", not "./src\\app.ts" or "/abs/path"). A path that resolves
 * outside the root, directly or through a symbolic link, throws an Error.
 */

export interface ListFilesOptions {
  /** Only files under this repo-relative directory, e.g. "internal/server". */
  dir?: string;
  /**
   * Glob filter. Without "/" it matches the file name at any depth: "*.go",
   * "*_test.{ts,go}". With "/" it must match the whole path: "cmd/*.go" (one
   * level), "internal/**" (everything below). Supports * ? ** [abc] [!abc] {a,b}.
   */
  glob?: string;
  /** Return at most this many paths (after sorting). Default: all. */
  limit?: number;
}

export interface ReadFileOptions {
  /** First line to return, 1-based, inclusive. */
  startLine?: number;
  /** Last line to return, 1-based, inclusive. */
  endLine?: number;
}

export interface SearchOptions {
  /** Only search files whose path matches this glob (same rules as listFiles). */
  glob?: string;
  /** Only search files under this repo-relative directory. */
  dir?: string;
  /** Stop after this many matches. Default 200. */
  limit?: number;
  /** Match case-insensitively. */
  ignoreCase?: boolean;
}

/** One matching line. */
export interface SearchMatch {
  /** Repo-relative path of the file. */
  path: string;
  /** 1-based line number. */
  line: number;
  /** The line's text (cut to ~400 characters around the match when longer). */
  text: string;
}

export interface FileInfo {
  /** Repo-relative path ("." for the root). */
  path: string;
  /** "symlink" only for a link leading outside the repository or nowhere; other links are followed. */
  type: "file" | "directory" | "symlink" | "other";
  /** Size in bytes. */
  size: number;
  /** Last modification time, ISO 8601. */
  modified: string;
}

/** Absolute path of the repository root (the program's working directory). */
export function repoRoot(): string;

/**
 * Lists files, sorted, as repo-relative paths. In a git work tree: tracked and
 * untracked files, .gitignore respected (what `git ls-files --cached --others
 * --exclude-standard` shows). Outside git: every file, skipping .git,
 * node_modules and .omni. Files under .omni/ are never listed.
 * @example await listFiles({ glob: "*.go", dir: "internal" })
 */
export function listFiles(opts?: ListFilesOptions): Promise<string[]>;

/**
 * Reads a UTF-8 text file. With startLine/endLine returns only those lines
 * (1-based, inclusive, line endings kept); a range past the end returns "".
 * Throws if the file does not exist or is a directory.
 * @example await readFile("go.mod", { startLine: 1, endLine: 5 })
 */
export function readFile(path: string, opts?: ReadFileOptions): Promise<string>;

/**
 * Creates or replaces a file, creating missing parent directories.
 * Refuses paths inside .git/ or .omni/.
 */
export function writeFile(path: string, content: string | Uint8Array): Promise<void>;

/** True if a file, directory or symbolic link is at the path. */
export function exists(path: string): Promise<boolean>;

/**
 * Type, size and modification time of what is at the path; throws if nothing is.
 * Symbolic links are followed when they lead inside the repository.
 */
export function stat(path: string): Promise<FileInfo>;

/**
 * Searches file contents line by line over the files listFiles returns.
 * A string is matched literally ("foo(" is fine); pass a RegExp for a pattern
 * (/func \w+Handler/). Skips binary files, files over 1 MiB and symbolic links.
 * Results are sorted by path, then line.
 * @example await search("TODO", { glob: "*.ts", limit: 50 })
 */
export function search(pattern: string | RegExp, opts?: SearchOptions): Promise<SearchMatch[]>;

/** True if a repo-relative path matches a glob (the rules of ListFilesOptions.glob). */
export function matchesGlob(path: string, glob: string): boolean;
