import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';

/** The pieces lib/runtime/settings/ builds its settings from: the forms a value may take. */
export const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
/** A setting whose empty value means unset (compose's `${NAME:-}` passes one through when it is not set). */
export const blankAsUnset = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema);

export function parseKeyring(text: string, ctx: z.RefinementCtx): { id: string; key: Buffer }[] {
  const ring = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const at = entry.indexOf(':');
      return { id: entry.slice(0, at), key: Buffer.from(entry.slice(at + 1), 'base64') };
    });
  const bad = ring.length === 0 || ring.some((k) => !/^[A-Za-z0-9_-]{1,32}$/.test(k.id) || k.key.length !== 32);
  const duplicate = new Set(ring.map((k) => k.id)).size !== ring.length;
  if (bad || duplicate) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be `<key id>:<base64 of 32 bytes>`, comma-separated, ids unique (letters, digits, - and _)',
    });
    return z.NEVER;
  }
  return ring;
}

/** A keyring file: the same entries as the variable, by commas or one a line. */
export function readKeyFile(path: string, ctx: z.RefinementCtx): string | undefined {
  try {
    return readFileSync(path, 'utf8').replace(/\s*\n\s*/g, ',');
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `cannot read ${path} (${(err as NodeJS.ErrnoException).code})` });
    return undefined;
  }
}

/** `10.0.0.0/8,192.0.2.7,fd00::/8`: each an address (a range of one) or a CIDR range. */
export function parseAddressRanges(
  text: string,
  ctx: z.RefinementCtx,
): { address: string; prefix: number; family: 'ipv4' | 'ipv6' }[] {
  const ranges = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const [address = '', bits] = entry.split('/', 2);
      const version = isIP(address);
      const max = version === 4 ? 32 : 128;
      const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
      return version && prefix >= 0 && prefix <= max
        ? { address, prefix, family: version === 4 ? ('ipv4' as const) : ('ipv6' as const) }
        : null;
    });
  if (ranges.some((r) => r === null)) {
    ctx.addIssue({ code: 'custom', message: 'must be IP addresses or CIDR ranges, comma-separated' });
    return z.NEVER;
  }
  return ranges as NonNullable<(typeof ranges)[number]>[];
}

export function parseJson(text: string, ctx: z.RefinementCtx): unknown {
  try {
    return JSON.parse(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be JSON' });
    return z.NEVER;
  }
}
