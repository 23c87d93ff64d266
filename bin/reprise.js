#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (npm run build).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
if (!existsSync(main)) {
  process.stderr.write('reprise: dist/ is missing; run `npm run build` first.\n');
  process.exit(2);
}
await import(main);
