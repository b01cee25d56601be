/** Tests run against the real stack that scripts/test.sh brings up (see test/support). */
const swc = [
  '@swc/jest',
  { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
];

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The production-shape tests need the full Temporal server: scripts/test-cluster.sh runs them.
  testPathIgnorePatterns:
    process.env.TRANCHE_TEST_TEMPORAL === 'cluster'
      ? ['/node_modules/']
      : ['/node_modules/', '<rootDir>/test/cluster/'],
  transform: { '^.+\\.(ts|js|mjs)$': swc },
  // ESM-only packages are compiled to CommonJS like our own code (oauth2-mock-server: a test's authorization server).
  transformIgnorePatterns: ['/node_modules/(?!(jose|oauth2-mock-server|is-plain-obj)/)'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  testSequencer: '<rootDir>/test/support/sequencer.js',
  testTimeout: 60_000,
  maxWorkers: 2,
  verbose: true,
};
