import { recordWebhookAttempt, recordWebhookDelivery } from '../../lib/metrics';
import { actor, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import type { Server } from 'node:http';
import { serveMetrics } from '../../lib/metrics-server';
import { startService, type TestService } from '../support/service';

const sample = (text: string, name: string, labels: Record<string, string>): number | undefined => {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && want.every((w) => l.includes(w)));
  return line === undefined ? undefined : Number(line.split(' ').pop());
};

/** GET /metrics: HTTP by route template and status, webhook deliveries, in the Prometheus format. */
describe('/metrics', () => {
  let svc: TestService;
  let metricsServer: Server;
  let metricsUrl: string;
  beforeAll(async () => {
    svc = await startService({ set: 'A' });
    // As api/main.ts does with METRICS_PORT: a port of its own.
    metricsServer = await serveMetrics('127.0.0.1', 0, 'test');
    metricsUrl = `http://127.0.0.1:${(metricsServer.address() as { port: number }).port}/metrics`;
  }, 120_000);
  afterAll(async () => {
    metricsServer?.close();
    await svc?.stop();
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
    expect(sample(text, 'tranche_http_request_duration_seconds_count', { method: 'GET', route, status: '404' })).toBe(was + 2);
    expect(text).not.toContain('8c4d3b4e-0000-4000-8000-000000000001');
    expect(text).toContain('tranche_process_resident_memory_bytes');
  });

  it('exports webhook deliveries by outcome, attempts by status class, and publish-to-delivery latency', async () => {
    recordWebhookAttempt('failed', 503);
    recordWebhookAttempt('failed', null);
    recordWebhookAttempt('success', 204);
    recordWebhookDelivery('success', new Date(Date.now() - 1500));
    recordWebhookDelivery('exhausted');
    const text = await (await fetch(metricsUrl)).text();
    expect(sample(text, 'tranche_webhook_attempts_total', { outcome: 'failed', status_class: '5xx' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'tranche_webhook_attempts_total', { outcome: 'failed', status_class: 'none' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'tranche_webhook_attempts_total', { outcome: 'success', status_class: '2xx' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'tranche_webhook_deliveries_total', { outcome: 'exhausted' })).toBeGreaterThanOrEqual(1);
    // 1.5 s after publication: inside the 2.5 s bucket, outside the 1 s one.
    expect(sample(text, 'tranche_webhook_publish_to_delivery_seconds_bucket', { le: '2.5' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'tranche_webhook_publish_to_delivery_seconds_bucket', { le: '1' })).toBe(0);
  });
});
