// Lint rules that hold the shape STYLE.md describes: no undeclared dependencies, and a domain
// (core/, ports/) that depends on nothing but itself — no config loader, HTTP layer, CLI,
// adapters or SDKs.
import js from '@eslint/js';
import importX from 'eslint-plugin-import-x';
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
  { files: ['src/core/**/*.ts'], rules: domainBoundary(['config', 'http', 'cli', 'adapters']) },
  { files: ['src/ports/**/*.ts'], rules: domainBoundary(['config', 'http', 'cli', 'adapters', 'core/bot']) },
  // The CLI's own output is the terminal.
  { files: ['src/cli/**/*.ts', 'src/main.ts', 'bin/**'], rules: { 'no-console': 'off' } },
);
