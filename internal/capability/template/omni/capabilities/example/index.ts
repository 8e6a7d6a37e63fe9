import { readFile } from "node:fs/promises";

/** Returns a greeting for name. */
export function greet(name: string): string {
  return `Hello, ${name}!`;
}

/** Counts the words of a file, relative to the repository root. */
export async function countWords(path: string): Promise<number> {
  const text = await readFile(path, "utf8");
  return text.split(/\s+/).filter(Boolean).length;
}
