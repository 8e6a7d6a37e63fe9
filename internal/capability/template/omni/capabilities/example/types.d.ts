/** Returns a greeting for name. */
export function greet(name: string): string;
/** Counts the words of a file, relative to the repository root. */
export function countWords(path: string): Promise<number>;
