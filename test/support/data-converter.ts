import type { temporal } from '@temporalio/proto';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { dataConverterFromEnv } from '../../lib/runtime/payload-codec';

/**
 * The data converter of the processes under test, from the payload keyring scripts/with-stack.ts
 * puts in the environment: a test's own Temporal client reads and writes what the workers seal.
 */
export const testDataConverter = () => dataConverterFromEnv(process.env);

type Payload = temporal.api.common.v1.IPayload;

const isPayload = (v: unknown): v is Payload =>
  typeof v === 'object' && v !== null && 'metadata' in v && 'data' in v && (v as Payload).data instanceof Uint8Array;

/**
 * A history as the replay suite keeps it (test/replay/histories): every payload the stack's codec
 * sealed opened, since the suite replays without this stack's key, as JSON like `temporal workflow show -o json`.
 */
export async function openedHistoryJSON(history: temporal.api.history.v1.IHistory): Promise<string> {
  const codecs = testDataConverter().payloadCodecs;
  const open = async (v: unknown): Promise<unknown> => {
    if (isPayload(v)) {
      let payloads = [v];
      for (const codec of [...codecs].reverse()) payloads = await codec.decode(payloads);
      return payloads[0];
    }
    if (Array.isArray(v)) return Promise.all(v.map(open));
    if (
      typeof v !== 'object' ||
      v === null ||
      v instanceof Uint8Array ||
      typeof (v as { toNumber?: unknown }).toNumber === 'function'
    )
      return v;
    // A plain copy: History.fromObject (in historyToJSON) makes the messages again.
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = await open(x);
    return out;
  };
  return historyToJSON((await open(history)) as temporal.api.history.v1.IHistory);
}
