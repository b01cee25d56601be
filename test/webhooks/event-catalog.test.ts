import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { BehaviourSet } from '../../lib/behaviour-set';
import { supportedEventTypes, TEST_PING, EXPLICIT_ONLY_EVENT_TYPES } from '../../domain/events';
import { actor, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import type { TestService } from '../support/service';
import { PATHS, registerHook } from './support/hooks';
import type { Receiver } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';

interface Entry {
  event_type: string;
  delivered_to: string;
  introduced_by: string;
  payload_versions: string[];
  schema: Record<string, unknown>;
  example: Record<string, unknown>;
  versions: { version: string; schema: Record<string, unknown>; example: Record<string, unknown> }[];
}

/**
 * The event catalog (docs/decisions/0397-event-catalog.md): every type a set delivers, with a schema its
 * example satisfies, and each example sent through the test path, signed, to that endpoint only, and
 * never listed by the events API as the organisation's.
 */
describe.each<BehaviourSet>(['A', 'B'])('Set %s event catalog', (set) => {
  let svc: TestService;
  let receiver: Receiver;
  let staff: Actor;
  let api: ReturnType<typeof http>;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);

  beforeAll(async () => {
    ({ svc, receiver, api, staff } = await startWebhookStack(set));
  });
  afterAll(() => stopWebhookStack({ svc, receiver }));

  const catalog = async (who: Actor) => {
    const res = await api.get('/notifications/event-catalog', who.token);
    expect(res.status).toBe(200);
    return res.body.data.items as Entry[];
  };

  it('lists every type the set delivers, each with an example its own schema accepts', async () => {
    const investor = await actor(svc, staff.orgId, ['investor']);
    const items = await catalog(investor);
    expect(items.map((i) => i.event_type)).toEqual([...supportedEventTypes(set)]);
    for (const item of items) {
      const valid = ajv.validate(item.schema, item.example);
      expect([item.event_type, valid ? [] : ajv.errors]).toEqual([item.event_type, []]);
      expect(item.example).toMatchObject({ event_type: item.event_type, version: '1' });
      // Each payload version's example satisfies that version's schema (docs/decisions/0420-versioned-payloads.md).
      expect(item.payload_versions).toEqual(['1', '2']);
      for (const v of item.versions) {
        const ok = ajv.validate(v.schema, v.example);
        expect([item.event_type, v.version, ok ? [] : ajv.errors]).toEqual([item.event_type, v.version, []]);
        expect(v.example).toMatchObject({ event_type: item.event_type, version: v.version });
      }
      expect(item.delivered_to).toBe(
        item.event_type === TEST_PING
          ? 'test_path'
          : EXPLICIT_ONLY_EVENT_TYPES.includes(item.event_type)
            ? 'named_only'
            : 'subscribers',
      );
    }
    expect(items.find((i) => i.event_type === 'webhook.endpoint.disabled')!.introduced_by).toMatch(
      /^docs\/decisions\//,
    );
  });

  it('sends each type’s example to one endpoint through the test path, signed, and keeps it out of the events API', async () => {
    const items = await catalog(staff);
    const hook = `catalog-${set.toLowerCase()}`;
    // Subscribed to nothing of these: an example is aimed, whatever the endpoint subscribes to.
    const endpoint = await registerHook(svc, receiver, staff, hook, [TEST_PING]);
    const other = await registerHook(svc, receiver, staff, `${hook}-other`, ['*']);
    const examples = items.filter((i) => i.event_type !== TEST_PING);
    const sent: Record<string, string> = {};
    for (const item of examples) {
      const res = await api.post(`${PATHS[set].endpoints}/${endpoint.id}/test`, staff.token, {
        event_type: item.event_type,
      });
      expect([item.event_type, res.status]).toEqual([item.event_type, 202]);
      expect(res.body.data.event_type).toBe(item.event_type);
      sent[item.event_type] = res.body.data.event_id;
    }
    const got = await receiver.waitFor(hook, examples.length, 60_000);
    expect(got.every((d) => d.verified)).toBe(true);
    for (const d of got) {
      const body = JSON.parse(d.body) as Record<string, unknown> & { event_type: string };
      const item = examples.find((i) => i.event_type === body.event_type)!;
      expect(body.event_id).toBe(sent[body.event_type]);
      expect(body.data).toEqual(item.example.data);
      expect(ajv.validate(item.schema, body)).toBe(true);
    }
    expect(await receiver.received(`${hook}-other`)).toEqual([]);
    expect(other.id).not.toBe(endpoint.id);

    const ping = await api.post(`${PATHS[set].endpoints}/${endpoint.id}/test`, staff.token);
    expect(ping.body.data.event_type).toBe(TEST_PING);
    const listed = await api.get('/notifications/events?limit=100', staff.token);
    const ids = (listed.body.data.items as { event_id: string }[]).map((e) => e.event_id);
    expect(ids).toContain(ping.body.data.event_id);
    expect(ids.filter((id) => Object.values(sent).includes(id))).toEqual([]);
  });

  it('refuses a type it does not deliver, and a body it does not know, in the one envelope', async () => {
    const endpoint = await registerHook(svc, receiver, staff, `catalog-refused-${set}`, ['*']);
    const path = `${PATHS[set].endpoints}/${endpoint.id}/test`;
    const unknown = await api.post(path, staff.token, { event_type: 'subscription.teleported' });
    expect([unknown.status, unknown.body.error.code, unknown.body.error.details[0].path]).toEqual([
      422,
      'VALIDATION_FAILED',
      'event_type',
    ]);
    const other = set === 'A' ? 'shares.issued' : 'kyc.case.approved';
    expect((await api.post(path, staff.token, { event_type: other })).status).toBe(422);
    const extra = await api.post(path, staff.token, { event_type: TEST_PING, data: { x: 1 } });
    expect([extra.status, extra.body.error.code]).toEqual([422, 'VALIDATION_FAILED']);
  });
});
