// Crockford base32: no I, L, O or U, so a code read aloud or typed from a bank statement survives.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A payment reference for wire or check subscriptions (spec §2.1 reference_code), e.g.
 * "TRN-7K3M-Q9XD-2F". Derived from a workflow-deterministic UUID: 55 random bits, unique in
 * practice and enforced by a unique index on the projection.
 */
export function referenceCodeFrom(uuid: string): string {
  let bits = BigInt(`0x${uuid.replace(/-/g, '').slice(0, 14)}`);
  let out = '';
  for (let i = 0; i < 11; i++) {
    out = ALPHABET[Number(bits & 31n)] + out;
    bits >>= 5n;
  }
  return `TRN-${out.slice(0, 4)}-${out.slice(4, 8)}-${out.slice(8)}`;
}
