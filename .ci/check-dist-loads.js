// Every module the image ships must load with production dependencies only: imports every
// dist/**/*.js (except main.js, which runs the CLI when loaded) and fails when one of them
// reaches a package that `npm prune --omit=dev` removes. In CI the dev dependencies are still
// installed, so a resolve hook refuses any package outside `npm ls --omit=dev`; in the Docker
// build, after the prune, the import itself is the check. Run: node .ci/check-dist-loads.js
import { spawnSync } from 'node:child_process';
import { readdirSync, realpathSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');

// npm ls exits non-zero on a peer-dependency warning yet still lists the tree: read its output either way.
const listed =
  spawnSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).stdout ?? '';
if (!listed.includes(`${sep}node_modules${sep}`)) {
  console.error('check-dist-loads: `npm ls --omit=dev` listed no installed package (run npm ci first)');
  process.exit(1);
}
const production = new Set(
  listed
    .split('\n')
    .filter((line) => line.includes(`${sep}node_modules${sep}`))
    .map((dir) => realpathSync(dir)),
);

/** The package folder that holds a file inside node_modules, or undefined for our own files. */
function packageDir(file) {
  const parts = file.split(sep);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return undefined;
  const name = parts[at + 1]?.startsWith('@') ? 2 : 1;
  return parts.slice(0, at + 1 + name).join(sep);
}

registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    if (!resolved.url.startsWith('file:')) return resolved;
    const dir = packageDir(realpathSync(fileURLToPath(resolved.url)));
    if (dir !== undefined && !production.has(dir) && !production.has(realpathSync(dir))) {
      const from = context.parentURL ? relative(root, fileURLToPath(context.parentURL)) : '?';
      throw new Error(`${from} imports ${specifier}, which is not a production dependency (npm prune --omit=dev removes it)`);
    }
    return resolved;
  },
});

const files = readdirSync(dist, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.js') && f !== 'main.js')
  .sort();
if (files.length === 0) {
  console.error(`check-dist-loads: no modules under ${dist} (run npm run build first)`);
  process.exit(1);
}
let failed = 0;
for (const file of files) {
  try {
    await import(pathToFileURL(join(dist, file)).href);
  } catch (err) {
    failed++;
    console.error(`check-dist-loads: dist/${file} does not load: ${err instanceof Error ? err.message : String(err)}`);
  }
}
if (failed > 0) process.exit(1);
console.log(`check-dist-loads: ${files.length} modules in dist/ load with production dependencies only`);
// A module may start a timer when loaded; the check is done.
process.exit(0);
