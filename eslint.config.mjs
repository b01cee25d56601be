// Lint is where determinism is enforced: workflow code may not reach I/O, the clock source of
// the host, the environment or Node's built-ins, and no promise may float anywhere.
import tseslint from 'typescript-eslint';

const IO_MODULES = [
  'node:*',
  'fs',
  'path',
  'os',
  'http',
  'https',
  'net',
  'crypto',
  'child_process',
  'worker_threads',
  'pg',
  '@mikro-orm/*',
  'koa',
  '@koa/*',
  'pino',
  'jose',
  'stripe',
  '@temporalio/client',
  '@temporalio/worker',
  '@temporalio/activity',
  '**/lib/runtime/*',
  '**/lib/ids',
  '**/db/*',
  '**/db/**',
  '**/api/**',
  '**/console/**',
  '**/identity/**',
  '**/server/**',
  '**/payments/**',
];

export default tseslint.config(
  { ignores: ['node_modules/**', '.data/**', 'bench/results/**', '**/*.js', '**/*.mjs'] },
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser, parserOptions: { projectService: true } },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
    },
  },
  {
    // The pure lib (docs/decisions/0330-rooms-and-walls.md): no environment; I/O modules are refused by
    // .dependency-cruiser.cjs. Process plumbing lives in lib/runtime/.
    files: ['lib/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'The pure lib reads no env or process: put it in lib/runtime/.' },
        { name: 'fetch', message: 'The pure lib does no I/O: put it in lib/runtime/.' },
      ],
    },
  },
  {
    files: ['workflows/**/*.ts', 'domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: IO_MODULES.map((group) => ({
            group: [group],
            message: 'Workflow code is deterministic: no I/O imports (do it in an activity).',
          })),
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'No env or process access in workflow code.' },
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'setInterval', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'fetch', message: 'No I/O in workflow code: use an activity.' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'Use uuid4() or a seeded value from the SDK.' },
      ],
    },
  },
);
