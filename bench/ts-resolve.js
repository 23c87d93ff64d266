// Lets Node 22 run the benchmark straight from TypeScript (`node --experimental-transform-types
// --import ./bench/ts-resolve.js bench/run.ts`): our sources import each other as `./x.js`, as
// NodeNext wants, while only `x.ts` exists until tsc runs. A relative `.js` that is not on disk
// resolves to the `.ts` beside it; everything else resolves as usual. Running from source keeps
// benchmarks out of dist/ without a second compile of src/ whose asset paths (the bundled
// catalog, eval scenarios) would then point inside the second output folder.
import { existsSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.startsWith('file:')) {
      const asJs = new URL(specifier, context.parentURL);
      if (!existsSync(fileURLToPath(asJs))) return nextResolve(`${specifier.slice(0, -3)}.ts`, context);
    }
    return nextResolve(specifier, context);
  },
});
