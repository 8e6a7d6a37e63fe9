// Tests of the repo module. Run from the repository root: bun test ./omni/capabilities
// Each test gets its own temporary git repository as OMNI_REPO_ROOT; nothing
// is written anywhere else.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { exists, listFiles, matchesGlob, readFile, repoRoot, search, stat, writeFile } from "./index.ts";

let root = "";
let outside = "";
const savedRoot = process.env.OMNI_REPO_ROOT;

function put(rel: string, content: string | Uint8Array): void {
  const abs = path.join(root, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  writeFileSync(abs, content);
}

function git(...args: string[]): void {
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd: root, stdio: "ignore" });
}

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), "omni-repo-test-"));
  outside = mkdtempSync(path.join(tmpdir(), "omni-repo-outside-"));
  process.env.OMNI_REPO_ROOT = root;
  put(".gitignore", "ignored/\n*.log\n");
  put("src/a.ts", "one\ntwo // TODO first\nthree\n");
  put("src/deep/b.go", "package deep\n\nfunc FooHandler() {}\n");
  put("src/gone.ts", "TODO deleted\n");
  put("bin.dat", new Uint8Array([84, 79, 68, 79, 0, 1, 2]));
  put("ignored/x.txt", "TODO ignored\n");
  put("app.log", "TODO log\n");
  writeFileSync(path.join(outside, "secret.txt"), "TODO secret\n");
  symlinkSync(path.join(outside, "secret.txt"), path.join(root, "link.txt"));
  symlinkSync(outside, path.join(root, "linkdir"));
  git("init", "-q");
  git("add", "-A");
  git("commit", "-qm", "init");
  rmSync(path.join(root, "src/gone.ts"));
  put("src/new.ts", "TODO untracked\n");
  put(".omni/state/junk.txt", "TODO omni\n");
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
  if (savedRoot === undefined) delete process.env.OMNI_REPO_ROOT;
  else process.env.OMNI_REPO_ROOT = savedRoot;
});

describe("listFiles", () => {
  test("what git sees: tracked and untracked, not ignored, deleted or .omni", async () => {
    expect(repoRoot()).toBe(root);
    expect(await listFiles()).toEqual([
      ".gitignore", "bin.dat", "link.txt", "linkdir", "src/a.ts", "src/deep/b.go", "src/new.ts",
    ]);
  });

  test("dir, glob and limit", async () => {
    expect(await listFiles({ dir: "src/deep" })).toEqual(["src/deep/b.go"]);
    expect(await listFiles({ glob: "*.ts" })).toEqual(["src/a.ts", "src/new.ts"]);
    expect(await listFiles({ glob: "src/*" })).toEqual(["src/a.ts", "src/new.ts"]);
    expect(await listFiles({ glob: "src/**" })).toEqual(["src/a.ts", "src/deep/b.go", "src/new.ts"]);
    expect(await listFiles({ glob: "*.{go,dat}" })).toEqual(["bin.dat", "src/deep/b.go"]);
    expect(await listFiles({ limit: 1 })).toEqual([".gitignore"]);
    expect(matchesGlob("a/b/c.ts", "a/**/*.ts")).toBe(true);
    expect(matchesGlob("a/b/c.ts", "a/*.ts")).toBe(false);
  });

  test("without git: a walk that skips .git, node_modules and .omni", async () => {
    rmSync(path.join(root, ".git"), { recursive: true, force: true });
    put("node_modules/m/index.js", "x");
    expect(await listFiles({ dir: "src" })).toEqual(["src/a.ts", "src/deep/b.go", "src/new.ts"]);
    expect(await listFiles({ glob: "*.{log,txt}" })).toEqual(["app.log", "ignored/x.txt", "link.txt"]);
  });

  test("bad dir", async () => {
    await expect(listFiles({ dir: "nope" })).rejects.toThrow(/no such directory: "nope"/);
    await expect(listFiles({ dir: ".." })).rejects.toThrow(/outside the repository root/);
  });
});

describe("readFile, writeFile, exists, stat", () => {
  test("reads whole files and line ranges", async () => {
    expect(await readFile("src/a.ts")).toBe("one\ntwo // TODO first\nthree\n");
    expect(await readFile("src/a.ts", { startLine: 2, endLine: 2 })).toBe("two // TODO first\n");
    expect(await readFile("src/a.ts", { startLine: 9 })).toBe("");
    await expect(readFile("src/a.ts", { startLine: 2, endLine: 1 })).rejects.toThrow(/endLine \(1\) is before startLine \(2\)/);
    await expect(readFile("missing.txt")).rejects.toThrow(/no such file: "missing.txt"/);
    await expect(readFile("src")).rejects.toThrow(/is a directory/);
  });

  test("refuses paths outside the root, also through symbolic links", async () => {
    await expect(readFile("../x")).rejects.toThrow(/outside the repository root/);
    await expect(readFile(path.join(outside, "secret.txt"))).rejects.toThrow(/outside the repository root/);
    await expect(readFile("link.txt")).rejects.toThrow(/through a symbolic link/);
    await expect(writeFile("linkdir/new.txt", "x")).rejects.toThrow(/through a symbolic link/);
    expect(existsSync(path.join(outside, "new.txt"))).toBe(false);
    await expect(exists("../x")).rejects.toThrow(/outside the repository root/);
  });

  test("writes, creating folders; refuses .git and .omni", async () => {
    await writeFile("gen/deep/out.txt", "hello\n");
    expect(readFileSync(path.join(root, "gen/deep/out.txt"), "utf8")).toBe("hello\n");
    await expect(writeFile(".git/HEAD", "x")).rejects.toThrow(/belongs to git/);
    await expect(writeFile(".omni/x", "x")).rejects.toThrow(/belongs to omnidev/);
  });

  test("exists and stat", async () => {
    expect(await exists("src/a.ts")).toBe(true);
    expect(await exists("src/zzz")).toBe(false);
    expect(await stat("src/a.ts")).toMatchObject({ path: "src/a.ts", type: "file", size: 28 });
    expect((await stat("src")).type).toBe("directory");
    await expect(stat("zzz")).rejects.toThrow(/no such file or directory/);
    // A link leading out is described, not followed; one leading inside is followed.
    expect((await stat("link.txt")).type).toBe("symlink");
    await expect(stat("linkdir/secret.txt")).rejects.toThrow(/through a symbolic link/);
    symlinkSync("src/a.ts", path.join(root, "inside-link"));
    expect(await stat("inside-link")).toMatchObject({ type: "file", size: 28 });
  });
});

describe("search", () => {
  test("literal strings over listed text files", async () => {
    expect(await search("TODO")).toEqual([
      { path: "src/a.ts", line: 2, text: "two // TODO first" },
      { path: "src/new.ts", line: 1, text: "TODO untracked" },
    ]);
    expect(await search("todo", { ignoreCase: true, glob: "a.ts" })).toHaveLength(1);
    expect(await search("TODO", { limit: 1 })).toHaveLength(1);
  });

  test("regular expressions, flags normalized", async () => {
    expect(await search(/func \w+handler/i)).toEqual([{ path: "src/deep/b.go", line: 3, text: "func FooHandler() {}" }]);
    expect(await search(/o/g, { dir: "src" })).toHaveLength(3); // one, two, FooHandler
    await expect(search("")).rejects.toThrow(/pattern must be a non-empty string or a RegExp/);
  });
});
