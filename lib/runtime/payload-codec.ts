import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { UNSEALED_REFUSED_ENCODING, unsealedRefused } from '../unsealed-payload';
import { ConfigSchema, type Config } from './config';
import { logger } from './logger';

/** One key of the payload keyring: its id travels in clear beside each payload it sealed. */
export interface PayloadKey {
  id: string;
  key: Buffer;
}

/** @internal exported for its tests */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;

const text = new TextEncoder();
const decodeText = (bytes: Uint8Array | null | undefined) => (bytes ? Buffer.from(bytes).toString('utf8') : '');

/**
 * Seals every payload (workflow inputs, results, signals, updates, queries, memos, failures' details)
 * with AES-256-GCM in this process, before Temporal's server sees it (docs/decisions/0306).
 * The first key seals; every key listed opens what was sealed under it, so a rotation puts a new key
 * first and keeps the old ones until no history needs them. A payload that is not sealed did not come
 * from a holder of the keys (a client without the codec: a plaintext "payment succeeded"): it is
 * refused, replaced by a marker no converter reads (lib/unsealed-payload.ts), unless `acceptUnsealed`
 * (TEMPORAL_ACCEPT_UNSEALED_PAYLOADS, never production; the codec server, which only shows payloads)
 * lets it through (docs/decisions/0379-unsealed-payloads-refused.md).
 */
export class AesGcmPayloadCodec implements PayloadCodec {
  private readonly byId: Map<string, Buffer>;
  private readonly current: PayloadKey;
  private readonly acceptUnsealed: boolean;

  constructor(ring: readonly PayloadKey[], opts: { acceptUnsealed?: boolean } = {}) {
    if (ring.length === 0) throw new Error('the payload keyring is empty');
    this.current = ring[0]!;
    this.byId = new Map(ring.map((k) => [k.id, k.key]));
    this.acceptUnsealed = opts.acceptUnsealed ?? false;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.seal(payload));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.open(payload));
  }

  private seal(payload: Payload): Payload {
    const plain = temporal.api.common.v1.Payload.encode(payload).finish();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(text.encode(this.current.id));
    const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: { encoding: text.encode(ENCRYPTED_ENCODING), [KEY_ID]: text.encode(this.current.id) },
      data: sealed,
    };
  }

  private open(payload: Payload): Payload {
    const encoding = decodeText(payload.metadata?.encoding);
    if (encoding !== ENCRYPTED_ENCODING) {
      if (this.acceptUnsealed || encoding === UNSEALED_REFUSED_ENCODING) return payload;
      // Its encoding only: the data is whatever a stranger sent.
      logger.warn({ encoding: encoding.slice(0, 40) }, 'refused a Temporal payload that arrived unsealed');
      return unsealedRefused();
    }
    const id = decodeText(payload.metadata?.[KEY_ID]);
    const key = this.byId.get(id);
    if (!key) throw new Error(`payload sealed under key "${id}", which is not in the payload keyring`);
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < IV_BYTES + TAG_BYTES) throw new Error('sealed payload is truncated');
    const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
    decipher.setAAD(text.encode(id));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    const plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    return temporal.api.common.v1.Payload.decode(plain);
  }
}

export type PayloadKeyConfig = Partial<
  Pick<Config, 'TEMPORAL_PAYLOAD_KEYS' | 'TEMPORAL_PAYLOAD_KEYS_FILE' | 'TEMPORAL_ACCEPT_UNSEALED_PAYLOADS'>
>;

/**
 * The codec every client and worker of this deployment shares, or none where no keyring is set
 * (refused in production by lib/runtime/config.ts; `npm start`, `npm run cluster`, the tests and the bench
 * always set one). The variable's keys come before the file's. `forDisplay`: the codec server's, which
 * shows an unsealed payload as it came rather than refusing it (it applies nothing).
 */
export function payloadCodecOf(
  config: PayloadKeyConfig,
  opts: { forDisplay?: boolean } = {},
): AesGcmPayloadCodec | undefined {
  const ring = [...(config.TEMPORAL_PAYLOAD_KEYS ?? []), ...(config.TEMPORAL_PAYLOAD_KEYS_FILE ?? [])];
  const acceptUnsealed = opts.forDisplay === true || config.TEMPORAL_ACCEPT_UNSEALED_PAYLOADS === true;
  return ring.length ? new AesGcmPayloadCodec(ring, { acceptUnsealed }) : undefined;
}

/** What `bundleWorkflowCode` and a data converter's `failureConverterPath` name: no import, a path. */
export const FAILURE_CONVERTER_PATH = require.resolve('../failure-converter');

/**
 * The data converter for a Client or Worker: the default payload converter, the failure converter
 * that moves messages into a payload (lib/failure-converter.ts), then the codec.
 */
export function dataConverterOf(config: PayloadKeyConfig): DataConverter & { payloadCodecs: PayloadCodec[] } {
  const codec = payloadCodecOf(config);
  return { payloadCodecs: codec ? [codec] : [], failureConverterPath: FAILURE_CONVERTER_PATH };
}

/** The same, from an environment's variables alone: for a process that loads no whole config (a bench, a test's own client). */
export function dataConverterFromEnv(env: NodeJS.ProcessEnv): DataConverter & { payloadCodecs: PayloadCodec[] } {
  return dataConverterOf(
    ConfigSchema.pick({
      TEMPORAL_PAYLOAD_KEYS: true,
      TEMPORAL_PAYLOAD_KEYS_FILE: true,
      TEMPORAL_ACCEPT_UNSEALED_PAYLOADS: true,
    }).parse(env),
  );
}
