/**
 * Debian's chromium (`apt-get install chromium`; `.ci/run` installs it) driven by
 * playwright-core, for the browser suite. Skipped with the reason when no chromium is found
 * locally — but when `REPRISE_REQUIRE_CHROMIUM=1` (set by `.ci/run` once it is installed) a
 * missing or unlaunchable browser fails the suite instead. playwright-core downloads nothing:
 * it drives the executable given.
 */
import { accessSync, constants } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const REQUIRED = process.env['REPRISE_REQUIRE_CHROMIUM'] === '1';
/** Where Debian (and derivatives) put it; `REPRISE_CHROMIUM` names another. */
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The chromium to drive, or undefined (the suite is skipped); throws when it is required and missing. */
export function findChromium(): string | undefined {
  const named = process.env['REPRISE_CHROMIUM'];
  const found = [...(named ? [named] : []), ...CANDIDATES].find(executable);
  if (found === undefined && REQUIRED)
    throw new Error(`REPRISE_REQUIRE_CHROMIUM=1 but no chromium at ${[named, ...CANDIDATES].filter(Boolean).join(', ')} (apt-get install chromium)`);
  return found;
}

/** Why the suite does not run here (for `describe.skipIf`'s title). */
export const NO_CHROMIUM_REASON = `no chromium found (${CANDIDATES.join(', ')}, or REPRISE_CHROMIUM): apt-get install chromium to run the browser suite`;

/** One headless browser for a test file. `--no-sandbox` only as root, where chromium refuses to start sandboxed. */
export function launchChromium(executablePath: string): Promise<Browser> {
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  return chromium.launch({
    executablePath,
    headless: true,
    args: ['--headless', ...(root ? ['--no-sandbox'] : []), '--disable-gpu', '--disable-dev-shm-usage'],
    timeout: 30_000,
  });
}
