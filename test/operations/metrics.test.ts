import { actor, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import type { Server } from 'node:http';
import { serveMetrics } from '../../lib/runtime/metrics-server';
import { startService, type TestService } from '../support/service';
import { Receiver } from '../webhooks/support/receiver';
import { until } from '../support/wait';
import { PATHS, registerHook } from '../webhooks/support/hooks';

const sample = (text: string, name: string, labels: Record<string, string>): number | undefined => {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text
    .split('\n')
    .find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && want.every((w) => l.includes(w)));
  return line === undefined ? undefined : Number(line.split(' ').pop());
};

/** GET /metrics: HTTP by route template and status, webhook deliveries, in the Prometheus format. */
describe('/metrics', () => {
  let svc: TestService;
  let receiver: Receiver;
  let metricsServer: Server;
  let metricsUrl: string;
  beforeAll(async () => {
    [svc, receiver] = await Promise.all([
      startService({ set: 'A', env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } }),
      Receiver.start(),
    ]);
    // As server/main.ts does with METRICS_PORT: a port of its own.
    metricsServer = await serveMetrics('127.0.0.1', 0, 'test');
    metricsUrl = `http://127.0.0.1:${(metricsServer.address() as { port: number }).port}/metrics`;
  }, 120_000);
  afterAll(async () => {
    metricsServer?.close();
    await svc?.stop();
    await receiver?.stop();
  });

  it('is not served on the public API port', async () => {
    expect((await http(svc.baseUrl).get('/metrics')).status).toBe(404);
  });

  it('counts requests by route template, never by raw path, with a latency histogram', async () => {
    const api = http(svc.baseUrl);
    const investor = await actor(svc, newOrg(), ['investor']);
    const route = '/issuance/subscriptions/:subscription_id';
    const before = await (await fetch(metricsUrl)).text();
    const was = sample(before, 'tranche_http_requests_total', { method: 'GET', route, status: '404' }) ?? 0;
    for (const id of ['8c4d3b4e-0000-4000-8000-000000000001', '8c4d3b4e-0000-4000-8000-000000000002']) {
      expect((await api.get(`/issuance/subscriptions/${id}`, investor.token)).status).toBe(404);
    }
    const res = await fetch(metricsUrl);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(sample(text, 'tranche_http_requests_total', { method: 'GET', route, status: '404' })).toBe(was + 2);
    expect(sample(text, 'tranche_http_request_duration_seconds_count', { method: 'GET', route, status: '404' })).toBe(
      was + 2,
    );
    expect(text).not.toContain('8c4d3b4e-0000-4000-8000-000000000001');
    expect(text).toContain('tranche_process_resident_memory_bytes');
  });

  it('counts the webhook deliveries and attempts the stack really made, by outcome and status class', async () => {
    const api = http(svc.baseUrl);
    const staff = await actor(svc, newOrg(), ['staff']);
    const metric = (text: string, name: string, labels: Record<string, string> = {}) => sample(text, name, labels) ?? 0;
    const scrape = async () => (await fetch(metricsUrl)).text();
    const before = await scrape();

    const [okHook, failingHook] = [`m-ok-${Date.now()}`, `m-503-${Date.now()}`];
    const ok = await registerHook(svc, receiver, staff, okHook, ['*'], { defaultStatus: 204 });
    const failing = await registerHook(svc, receiver, staff, failingHook, ['*'], { defaultStatus: 503 });
    // Nothing listens on port 1: the attempt gets no response at all.
    const silent = (
      await api.post(PATHS.A.endpoints, staff.token, {
        url: 'http://127.0.0.1:1/hook',
        description: 'silent',
        eventTypes: ['*'],
      })
    ).body.data;
    const ping = async (endpointId: string) =>
      (await api.post(`${PATHS.A.endpoints}/${endpointId}/test`, staff.token)).body.data.delivery_id as string;
    const [okId, failingId, silentId] = await Promise.all([ping(ok.id), ping(failing.id), ping(silent.id)]);
    const settled = (id: string, status: string) =>
      until(
        `${id} ${status}`,
        async () =>
          (await api.get(`${PATHS.A.deliveries}/${id}`, staff.token)).body.data?.status === status ? true : undefined,
        { timeoutMs: 60_000 },
      );
    await Promise.all([settled(okId, 'success'), settled(failingId, 'failed'), settled(silentId, 'failed')]);
    // Deleting the failing endpoints stops their schedules, so no later attempt changes the counts.
    for (const id of [failing.id, silent.id])
      expect((await api.delete(`${PATHS.A.endpoints}/${id}`, staff.token)).status).toBe(204);

    const after = await scrape();
    const grew = (name: string, labels: Record<string, string> = {}) =>
      metric(after, name, labels) - metric(before, name, labels);
    expect(grew('tranche_webhook_attempts_total', { outcome: 'success', status_class: '2xx' })).toBe(1);
    expect(grew('tranche_webhook_attempts_total', { outcome: 'failed', status_class: '5xx' })).toBe(1);
    expect(grew('tranche_webhook_attempts_total', { outcome: 'failed', status_class: 'none' })).toBe(1);
    expect(grew('tranche_webhook_deliveries_total', { outcome: 'success' })).toBe(1);
    expect(grew('tranche_webhook_publish_to_delivery_seconds_count')).toBe(1);
    // Each of the three attempts was timed, by outcome (the dashboard's attempt latency).
    expect(grew('tranche_webhook_attempt_duration_seconds_count', { outcome: 'success' })).toBe(1);
    expect(grew('tranche_webhook_attempt_duration_seconds_count', { outcome: 'failed' })).toBe(2);
    const seconds = grew('tranche_webhook_attempt_duration_seconds_sum', { outcome: 'success' });
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThan(60);
    // The one success arrived within the histogram's last bucket, and no delivery was counted twice.
    expect(grew('tranche_webhook_publish_to_delivery_seconds_bucket', { le: '+Inf' })).toBe(1);
    // And the counts are the requests the endpoints really got.
    expect((await receiver.received(okHook)).map((r) => r.status)).toEqual([204]);
    expect((await receiver.received(failingHook)).map((r) => r.status)).toEqual([503]);
  }, 120_000);
});
