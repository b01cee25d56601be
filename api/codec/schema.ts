import { z } from 'zod';

const Base64 = z.base64().max(4 * 1024 * 1024);

/** One payload in the protobuf JSON form Temporal's Web UI and CLI send: bytes as base64. */
const JsonPayload = z.object({
  metadata: z.record(z.string().max(256), Base64).optional(),
  data: Base64.optional(),
});

/**
 * A codec server request and answer (Temporal's remote codec protocol): the payloads, in order. Protobuf's JSON
 * leaves an empty list out, so the CLI sends `{}` for no payloads.
 */
export const CodecPayloads = z.object({ payloads: z.array(JsonPayload).max(1000).default([]) });
export type CodecPayloads = z.infer<typeof CodecPayloads>;
