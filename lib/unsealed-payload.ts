import type { Payload } from '@temporalio/common';

/**
 * What the payload codec puts in place of a payload that arrived unsealed where sealing is required
 * (docs/decisions/0379-unsealed-payloads-refused.md): no data, and an encoding no converter knows, so
 * converting it fails ("Unknown encoding: binary/unsealed-refused") wherever it is read, and the
 * workflow interceptors (workflows/unsealed-refused.ts) can see it before a handler runs.
 */
export const UNSEALED_REFUSED_ENCODING = 'binary/unsealed-refused';

const MARK = Uint8Array.from(UNSEALED_REFUSED_ENCODING, (c) => c.charCodeAt(0));

/** The marker itself. */
export const unsealedRefused = (): Payload => ({ metadata: { encoding: MARK }, data: new Uint8Array() });

/** Whether any of these payloads arrived unsealed and was refused. Compares bytes: no TextDecoder in the sandbox needed. */
export function anyRefused(payloads: readonly Payload[] | null | undefined): boolean {
  return (payloads ?? []).some((p) => {
    const encoding = p.metadata?.encoding;
    return !!encoding && encoding.length === MARK.length && MARK.every((b, i) => encoding[i] === b);
  });
}
