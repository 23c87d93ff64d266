import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Heap limit for benchmark children: the 100k indexes outgrow Node's default (~4 GiB). */
export const CHILD_HEAP_MB = 12_288;

/** Path of a sibling script (`bench/<name>.ts`). */
export function siblingScript(name: string): string {
  return fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
}

/** The flags that let Node 22 run the benchmark's TypeScript, as `npm run bench` starts the parent (see ts-resolve.js). */
export const TS_FLAGS: readonly string[] = [
  '--experimental-transform-types',
  '--disable-warning=ExperimentalWarning',
  '--import',
  fileURLToPath(new URL('./ts-resolve.js', import.meta.url)),
];

/**
 * Run `node <flags> bench/<script>.ts <args>` and parse the JSON line it prints last on
 * stdout. Its stderr (progress lines) passes through. A fresh process per measurement keeps
 * one engine's heap and JIT state from colouring the next one's numbers.
 */
export function runChildJson<T>(script: string, args: readonly string[], flags: readonly string[] = []): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...TS_FLAGS, `--max-old-space-size=${CHILD_HEAP_MB}`, ...flags, siblingScript(script), ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${script} ${args.join(' ')} exited with ${code}`));
      const last = out.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(last) as T);
      } catch {
        reject(new Error(`${script} ${args.join(' ')} printed no JSON result: ${last.slice(0, 200)}`));
      }
    });
  });
}

/** Parse a positive integer CLI argument or exit with a clear message. */
export function positiveIntArg(raw: string | undefined, what: string): number {
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) {
    process.stderr.write(`bench: ${what} must be a positive integer, got ${JSON.stringify(raw)}\n`);
    process.exit(2);
  }
  return n;
}
