// Lint rules that hold the shape STYLE.md describes: no undeclared dependencies, no import
// cycles in src/, and a domain (core/, ports/) that depends on nothing but itself — no config
// loader, HTTP layer, CLI, runtime, adapters or SDKs. This file is the one place the boundary is
// written; test/unit/lint-rules.test.ts proves on fixtures that each rule fails when broken.
import js from '@eslint/js';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const SDKS = [
  '@slack/*',
  'matrix-bot-sdk',
  'openai',
  '@octokit/*',
  'keyv',
  '@keyv/*',
  'flexsearch',
  'simple-git',
  'pino',
  '@modelcontextprotocol/*',
  'hono',
  '@hono/*',
  'prom-client',
];

/** What surrounds the domain: core/ and ports/ import none of it. */
const SHELL = ['config', 'http', 'cli', 'runtime', 'adapters'];

const domainBoundary = (layers) => ({
  'no-restricted-imports': [
    'error',
    {
      patterns: [
        { group: layers.map((l) => `**/${l}/**`), message: 'core/ and ports/ depend on ports only: pass typed values in (STYLE.md).' },
        { group: SDKS, message: 'core/ and ports/ import no SDK: an adapter translates (STYLE.md).' },
      ],
    },
  ],
  // A module loaded at run time would pass the import rule above unseen.
  'no-restricted-syntax': [
    'error',
    { selector: 'ImportExpression', message: 'core/ and ports/ load no module at run time: import it, or have the caller pass it in.' },
    { selector: "CallExpression[callee.name='require']", message: 'core/ and ports/ load no module at run time: import it, or have the caller pass it in.' },
  ],
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'shim/**', 'templates/**', 'catalog/**', 'eval/**', 'manifests/**', 'test/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      // Escapers and neutralisers match control characters on purpose.
      'no-control-regex': 'off',
      'import-x/no-extraneous-dependencies': ['error', { devDependencies: false, optionalDependencies: false, peerDependencies: false }],
      'no-console': 'error',
      // A variable a closure reads before its one assignment (set once start-up has built it) stays `let`.
      'prefer-const': ['error', { destructuring: 'all', ignoreReadBeforeAssign: true }],
    },
  },
  {
    files: ['bin/**/*.js', '*.config.js', '.ci/**/*.js', 'bench/**/*.js'],
    languageOptions: { globals: { process: 'readonly', URL: 'readonly', console: 'readonly' } },
  },
  // What ships may import only dependencies; tests, benchmarks and tool configs may use devDependencies.
  {
    files: ['test/**', 'bench/**', '.ci/**', '*.config.ts', '*.config.js'],
    rules: { 'import-x/no-extraneous-dependencies': ['error', { devDependencies: true }], 'no-console': 'off' },
  },
  // Imports resolve as tsc resolves them (`./x.js` is ./x.ts), so import-x follows them.
  {
    files: ['src/**/*.ts'],
    settings: {
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'], extensionAlias: { '.js': ['.ts', '.js'] } })],
    },
    // A cycle is a module that cannot be read (or loaded) on its own: shared types go to a leaf module.
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  { files: ['src/core/**/*.ts'], rules: domainBoundary(SHELL) },
  { files: ['src/ports/**/*.ts'], rules: domainBoundary([...SHELL, 'core/bot']) },
  // The command layer sits on top: what it runs (runtime/, http/, adapters/, config/) never imports cli/.
  {
    files: ['src/runtime/**/*.ts', 'src/http/**/*.ts', 'src/adapters/**/*.ts', 'src/config/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/cli/**'], message: 'cli/ is the command layer on top: move what both need to runtime/ (STYLE.md).' }] },
      ],
    },
  },
  // The CLI's own output is the terminal.
  { files: ['src/cli/**/*.ts', 'src/main.ts', 'bin/**'], rules: { 'no-console': 'off' } },
);
