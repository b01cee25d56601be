/**
 * The architecture, as the build enforces it (`npm run lint:architecture`, part of `npm test`).
 * Each top-level folder may import only what its line below allows; imports run down, never up:
 *
 *   scripts, bench        -> the public faces (api/index.ts, webhooks/index.ts, payments/index.ts),
 *                            worker, db, domain, lib; scripts/lib for the embedded stack
 *   api, worker           -> the faces of the engine and the payments, activities (worker only),
 *                            workflows (worker only: it bundles them), db, domain, lib
 *   workflows             -> domain, lib; activities by type only (proxyActivities<Activities>)
 *   activities            -> the faces of the engine and the payments, db, domain, lib
 *   webhooks, payments    -> db, domain, lib (and their own files)
 *   db                    -> domain, lib
 *   domain                -> lib
 *   lib                   -> nothing of ours
 *
 * test/ may import anything. No import circle anywhere.
 */
const FOLDERS = [
  'api',
  'worker',
  'workflows',
  'activities',
  'webhooks',
  'payments',
  'db',
  'domain',
  'lib',
  'scripts',
  'bench',
];

/** What each folder may import besides itself and packages. */
const ALLOWED = {
  lib: [],
  domain: ['lib'],
  db: ['domain', 'lib'],
  webhooks: ['db', 'domain', 'lib'],
  payments: ['db', 'domain', 'lib'],
  activities: ['webhooks/index.ts', 'payments/index.ts', 'db', 'domain', 'lib'],
  workflows: ['domain', 'lib'],
  api: ['webhooks/index.ts', 'payments/index.ts', 'db', 'domain', 'lib'],
  worker: ['activities', 'workflows', 'webhooks/index.ts', 'payments/index.ts', 'db', 'domain', 'lib'],
  scripts: ['api/index.ts', 'webhooks/index.ts', 'payments/index.ts', 'worker', 'db', 'domain', 'lib'],
  bench: ['api/index.ts', 'webhooks/index.ts', 'payments/index.ts', 'scripts/lib', 'worker', 'db', 'domain', 'lib'],
};

/** Imports of packages (Node's own, npm's) are not ours to layer. */
const PACKAGES = ['core', 'npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-bundled', 'npm-no-pkg', 'npm-unknown'];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
/** A path pattern for a folder ("db" -> everything under db/) or one file ("api/index.ts"). */
const target = (t) => (t.endsWith('.ts') ? `^${escape(t)}$` : `^${escape(t)}/`);

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle: split the shared part into a module both import.',
      from: {},
      to: { circular: true },
    },
    ...FOLDERS.map((folder) => ({
      name: `${folder}-imports-down-only`,
      severity: 'error',
      comment: `${folder}/ may import only ${ALLOWED[folder].join(', ') || 'packages'} (.dependency-cruiser.cjs)`,
      from: { path: `^${folder}/` },
      to: {
        pathNot: [`^${folder}/`, 'node_modules', ...ALLOWED[folder].map(target)],
        // The workflows name their activities' type (proxyActivities<Activities>): types only, never code.
        dependencyTypesNot: [...PACKAGES, ...(folder === 'workflows' ? ['type-only'] : [])],
      },
    })),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|test|types|docs)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.js', '.json'],
      conditionNames: ['import', 'require', 'node', 'default'],
      exportsFields: ['exports'],
    },
  },
};
