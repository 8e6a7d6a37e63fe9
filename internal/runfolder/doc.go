// Package runfolder maintains the run folder, <root>/.omni/sandbox, that
// executed code runs from (the folder keeps the name OmniDev gave it; what
// contains a run is internal/isolate):
//
//	.omni/sandbox/
//	  main.ts            the agent's program, written verbatim by WriteMain
//	  runner.ts          waits for a byte on stdin, makes main.ts's relative
//	                     imports resolve from the repository root, imports
//	                     ./main.ts, awaits main() and sets the exit code
//	  package.json       {"type": "module"}, so Node (tsx) loads both files as ESM
//	  import_map.json    module -> entry file, for Deno (which ignores node_modules)
//	  node_modules       symlink -> node_modules.<generation>
//	  node_modules.<generation>/<module>  relative symlink -> omni/capabilities/<id>,
//	                     or a stub that throws why, for a capability that cannot run,
//	                     or the generated module of a wrapped MCP server
//	  node_modules.<generation>/omnidev   omnidev's built-in module (runs.list, show,
//	                     undo), in every run folder; its calls go to the server
//	                     through the relay's socket
//
// A wrapped server's module is JavaScript, index.js typed by the index.d.ts
// beside it, so that no runtime transpiles it on each run. WriteMain fits
// it to each program: when main.ts imports the module only by plain named
// imports, and imports no file of its own nor anything dynamically,
// index.js exports just those names (and call); otherwise every tool. A
// server of thousands of tools would otherwise cost each run the import of
// all of them.
//
// Bun and tsx resolve `import x from "<module>"` in main.ts through
// node_modules/<module>, following the symlink to the capability folder (its
// package.json "main", else index.ts). Deno refuses TypeScript reached through
// node_modules, so its preset passes import_map.json instead.
//
// A reload builds a new generation next to the live one and swaps the
// node_modules symlink with one rename, so a run never sees a half-built tree.
// main.ts and runner.ts sit outside the generations and are each replaced by
// a rename, so a swap can never lose the program that is about to run.
//
// The package writes only below .omni/sandbox; it must never run code,
// never contain or limit a run (internal/isolate does), and never decide
// which capabilities are enabled (that is the Registry's job).
package runfolder
