/**
 * The architecture, as the build enforces it (`npm run lint:architecture`, part of `npm test`).
 * Each room may import only what its line below allows; imports run down, never up
 * (docs/decisions/0330-rooms-and-walls.md):
 *
 *   scripts, bench   -> the faces (server/index.ts, identity/index.ts, webhooks/index.ts,
 *                       payments/index.ts), worker, db, domain, lib; bench also scripts/lib
 *   server           -> the API process's composition: api, console/index.ts and the faces below
 *   console          -> the API's public schemas and paths (api/<feature>/schema.ts, *-schema.ts,
 *                       api/notifications/paths.ts), identity/index.ts, domain, lib
 *   api              -> the faces of identity, the engine and the payments, the db files its
 *                       routes read and write (not the engine's rows, not migrations), domain, lib
 *   worker           -> activities, workflows (it bundles them), the faces, db, domain, lib
 *   workflows        -> domain and the pure lib; activities/index.ts by type only
 *   activities       -> the faces of the engine and the payments, db, domain, lib
 *   identity         -> the engine's face (identity events), db, domain, lib
 *   webhooks, payments -> db, domain, lib
 *   db               -> domain, lib
 *   domain           -> the pure lib
 *   lib/runtime      -> the pure lib: config, logger, metrics, tracing, the Temporal connection
 *   lib              -> nothing of ours, and no I/O module: pure helpers (money, ids, errors)
 *
 * Inside api/: the ground (middleware/, personal/, respond.ts, cursor.ts, deps.ts,
 * dependency-watch.ts, warmth.ts) imports no feature folder; inside console/, views/ import no route,
 * kit or router. test/ may import anything. No circle.
 *
 * Inside webhooks/: every file but the face (index.ts) lives in a room, and each room imports only the
 * rooms its line in WEBHOOK_ROOMS names, never the face (docs/decisions/0425-webhooks-rooms.md):
 *
 *   secrets, deliveries -> no other room
 *   events              -> secrets
 *   endpoints           -> secrets, deliveries, events
 *   egress              -> secrets, deliveries, endpoints
 *   recovery            -> deliveries, events
 *   attempts            -> deliveries, events, endpoints, egress
 *   dispatch            -> secrets, deliveries, events, endpoints, egress, attempts
 */
const FACES = ['identity/index.ts', 'webhooks/index.ts', 'payments/index.ts'];
const LIB = ['lib/runtime', 'lib'];

/** What each room may import besides itself and packages; the first matching room of a file is its room. */
const ROOMS = [
  ['scripts', ['server/index.ts', ...FACES, 'worker', 'db', 'domain', ...LIB]],
  ['bench', ['server/index.ts', ...FACES, 'scripts/lib', 'worker', 'db', 'domain', ...LIB]],
  ['server', ['api', 'console/index.ts', ...FACES, 'db', 'domain', ...LIB]],
  [
    'console',
    ['re:^api/[a-z]+/[a-z-]*schema\\.ts$', 'api/notifications/paths.ts', 'identity/index.ts', 'domain', ...LIB],
  ],
  [
    'api',
    [
      ...FACES,
      're:^db/(orm|audit-log|personal-keys|personal-reseal|offering-capacity|subscription-attention|rate-limits|idempotency-keys|keyset|refund-intents)\\.ts$',
      're:^db/entities/(offering|security-class|tranche|subscription-record|payment-[a-z-]+|identity-[a-z-]+)\\.ts$',
      'domain',
      ...LIB,
    ],
  ],
  ['worker', ['activities', 'workflows', 'webhooks/index.ts', 'payments/index.ts', 'db', 'domain', ...LIB]],
  ['workflows', ['domain', 'lib-pure', 'activities/index.ts']],
  ['activities', ['webhooks/index.ts', 'payments/index.ts', 'db', 'domain', ...LIB]],
  ['identity', ['webhooks/index.ts', 'db', 'domain', ...LIB]],
  ['webhooks', ['db', 'domain', ...LIB]],
  ['payments', ['db', 'domain', ...LIB]],
  ['db', ['domain', ...LIB]],
  ['domain', ['lib-pure']],
  ['lib/runtime', ['lib-pure']],
  ['lib', []],
];

/** Imports of packages (Node's own, npm's) are not ours to layer. */
const PACKAGES = ['core', 'npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-bundled', 'npm-no-pkg', 'npm-unknown'];
/** Node modules that reach outside the process: never in the pure lib, the domain or the workflows. */
const IO_MODULES = ['fs', 'net', 'http', 'http2', 'https', 'dns', 'tls', 'dgram', 'child_process', 'cluster', 'os'];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
/** A path pattern: "re:..." as written, "lib-pure" for lib/ outside lib/runtime, a folder, or one file. */
const target = (t) => {
  if (t.startsWith('re:')) return t.slice(3);
  if (t === 'lib-pure') return '^lib/(?!runtime/)';
  return t.endsWith('.ts') ? `^${escape(t)}$` : `^${escape(t)}/`;
};
const roomPattern = (room) => (room === 'lib' ? '^lib/(?!runtime/)' : `^${escape(room)}/`);
/** The rooms of webhooks/ and the rooms each may import besides itself (below it, never up). */
const WEBHOOK_ROOMS = [
  ['secrets', []],
  ['deliveries', []],
  ['events', ['secrets']],
  ['endpoints', ['secrets', 'deliveries', 'events']],
  ['egress', ['secrets', 'deliveries', 'endpoints']],
  ['recovery', ['deliveries', 'events']],
  ['attempts', ['deliveries', 'events', 'endpoints', 'egress']],
  ['dispatch', ['secrets', 'deliveries', 'events', 'endpoints', 'egress', 'attempts']],
];
const webhookRoom = (room) => `^webhooks/${escape(room)}/`;
const CONSOLE_VIEW_GROUND = '^console/(views/|(api-types|api-client|commands|format|layout|links)\\.ts$)';
const API_GROUND = '^api/(middleware/|personal/|(respond|cursor|deps|dependency-watch|warmth)\\.ts$)';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle: split the shared part into a module both import.',
      from: {},
      to: { circular: true },
    },
    ...ROOMS.map(([room, allowed]) => ({
      name: `${room.replace('/', '-')}-imports-down-only`,
      severity: 'error',
      comment: `${room}/ may import only ${allowed.join(', ') || 'packages'} (.dependency-cruiser.cjs)`,
      from: { path: roomPattern(room) },
      to: {
        pathNot: [roomPattern(room), 'node_modules', ...allowed.map(target)],
        dependencyTypesNot: PACKAGES,
      },
    })),
    {
      name: 'workflows-import-activities-types-only',
      severity: 'error',
      comment: 'Workflows may import activities/index.ts for its types, never its code.',
      from: { path: '^workflows/' },
      to: { path: '^activities/index\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'pure-code-no-io',
      severity: 'error',
      comment: 'The pure lib, the domain and the workflows reach nothing outside the process (lib/runtime does).',
      from: { path: '^(lib/(?!runtime/)|domain/|workflows/)' },
      to: { dependencyTypes: ['core'], path: `^(node:)?(${IO_MODULES.join('|')})$` },
    },
    {
      name: 'api-ground-imports-no-feature',
      severity: 'error',
      comment: "api/'s middleware, personal/, respond, cursor, deps and the dependency watch import no feature folder.",
      from: { path: API_GROUND },
      to: { path: '^api/', pathNot: API_GROUND },
    },
    {
      name: 'webhooks-files-in-rooms',
      severity: 'error',
      comment:
        'Every file of webhooks/ but its face (index.ts) lives in one of its rooms: webhooks/<room>/ (.dependency-cruiser.cjs, WEBHOOK_ROOMS).',
      from: { path: '^webhooks/[^/]+$', pathNot: '^webhooks/index\\.ts$' },
      to: {},
    },
    ...WEBHOOK_ROOMS.map(([room, allowed]) => ({
      name: `webhooks-${room}-walls`,
      severity: 'error',
      comment: `webhooks/${room}/ may import only ${
        allowed.map((r) => `webhooks/${r}/`).join(', ') || 'no other room'
      } of the engine, and never its face webhooks/index.ts (.dependency-cruiser.cjs)`,
      from: { path: webhookRoom(room) },
      to: { path: '^webhooks/', pathNot: [webhookRoom(room), ...allowed.map(webhookRoom)] },
    })),
    {
      name: 'console-views-render-only',
      severity: 'error',
      comment:
        'console/views/ render HTML from what they are given: they import no route, kit or router of the console.',
      from: { path: '^console/views/' },
      to: { path: '^console/', pathNot: CONSOLE_VIEW_GROUND },
    },
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
