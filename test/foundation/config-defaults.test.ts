import { ConfigError, loadConfig } from '../../lib/runtime/config';

/** The configuration a process starts from: documented defaults, and a clear refusal of what is wrong. */
describe('configuration', () => {
  const valid = { DATABASE_URL: 'postgres://u:p@localhost:5432/db', NODE_ENV: 'development' };

  it('applies the documented defaults', () => {
    const config = loadConfig(valid);
    expect(config).toMatchObject({
      PORT: 3000,
      BEHAVIOUR_SET: 'A',
      TEMPORAL_ADDRESS: 'localhost:7233',
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: 'tranche',
    });
  });

  it.each([
    ['BEHAVIOUR_SET', 'C'],
    ['PORT', 'eighty'],
    ['DATABASE_URL', 'mysql://localhost/db'],
  ])('fails at start with a message naming %s when it is %p', (name, value) => {
    expect(() => loadConfig({ ...valid, [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...valid, [name]: value })).toThrow(new RegExp(`${name}:`));
  });

  it('requires DATABASE_URL', () => {
    expect(() => loadConfig({ NODE_ENV: 'development' })).toThrow(/DATABASE_URL:/);
  });

  it('requires an access-token signing key in production', () => {
    expect(() => loadConfig({ ...valid, NODE_ENV: 'production' })).toThrow(/ACCESS_TOKEN_PRIVATE_KEY/);
  });

  it("sizes a worker's workflow tasks within its cache, or refuses to start saying so", () => {
    expect(loadConfig(valid).WORKER_MAX_CONCURRENT_WORKFLOW_TASKS).toBe(100);
    const sized = { ...valid, WORKER_MAX_CACHED_WORKFLOWS: '400', WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '400' };
    expect(loadConfig(sized).WORKER_MAX_CONCURRENT_WORKFLOW_TASKS).toBe(400);
    expect(() => loadConfig({ ...sized, WORKER_MAX_CACHED_WORKFLOWS: '200' })).toThrow(
      /WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: at most WORKER_MAX_CACHED_WORKFLOWS/,
    );
    // With no cache, every workflow task replays its history, and the two are not tied.
    expect(loadConfig({ ...sized, WORKER_MAX_CACHED_WORKFLOWS: '0' }).WORKER_MAX_CACHED_WORKFLOWS).toBe(0);
  });
});
