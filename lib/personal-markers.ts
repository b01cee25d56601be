/**
 * The forms a personal field takes once it is kept (docs/decisions/0313-erasure-by-crypto-shredding.md,
 * docs/decisions/0381-erasure-complete.md): sealed under its investor's key, or one of the markers a
 * read shows in its place. No crypto here, so workflow code and the domain can tell a kept value from
 * one still in clear (lib/personal-data.ts seals and opens).
 */

/** The prefix of every sealed value: `pii:v1:<data key id>:<base64url>`. */
export const SEALED_PREFIX = 'pii:v1:';

/** What a read shows in place of a value whose key was destroyed (and what is stored once its investor was erased). */
export const ERASED = '[erased]';

/** What a read shows in place of a value that does not open here: another organisation's key, or tampered. */
export const UNREADABLE = '[unreadable]';

/** True for a value kept as it should be (sealed, or a marker); false for one still in clear. */
export const isKept = (value: string): boolean =>
  value.startsWith(SEALED_PREFIX) || value === ERASED || value === UNREADABLE;
