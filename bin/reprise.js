#!/usr/bin/env node
// Thin launcher: check the runtime first (the CLI needs Node 22's built-in node:sqlite, and an
// older node fails with an obscure "No such built-in module"), then load the compiled CLI.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const MIN_MAJOR = 22;
const major = Number(process.versions.node.split('.')[0]);
if (!(major >= MIN_MAJOR)) {
  process.stderr.write(
    `reprise: Reprise needs Node.js >= ${MIN_MAJOR} (found v${process.versions.node}). ` +
      'Install Node 22 or newer (nodejs.org, your package manager, or `npm install node@22`) and run it again.\n',
  );
  process.exit(1);
}
const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
if (!existsSync(main)) {
  process.stderr.write('reprise: dist/ is missing; run `npm run build` first.\n');
  process.exit(2);
}
await import(main);
