/**
 * Text as the database and the audit trail count it: in code points (characters), never in the
 * UTF-16 units a JavaScript string's `length` counts, where an emoji is two
 * (docs/decisions/0361-text-counted-and-cut-in-characters.md).
 */

/**
 * What makes a string unstorable, whatever the field: PostgreSQL's text cannot hold U+0000, and
 * its jsonb refuses the escape of a lone surrogate (half of a character, e.g. `\ud800`) that
 * JSON.stringify writes for one (docs/decisions/0360-well-formed-text-at-the-door.md).
 */
export type IllFormed = { kind: 'nul' } | { kind: 'lone_surrogate'; unit: number };

export function illFormed(text: string): IllFormed | undefined {
  if (!text.isWellFormed()) return { kind: 'lone_surrogate', unit: loneSurrogate(text) };
  if (text.includes('\u0000')) return { kind: 'nul' };
  return undefined;
}

/** The first lone surrogate of text that is not well-formed. */
function loneSurrogate(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    const next = text.charCodeAt(i + 1);
    if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++;
    else return unit;
  }
  return 0xfffd;
}

/** `U+D800`: how a code point or unit is named in a message. */
export const codePointName = (unit: number) => `U+${unit.toString(16).toUpperCase().padStart(4, '0')}`;

/** A string with its NULs and lone surrogates written as `\uXXXX` escapes: safe to store, log and show. */
export function escapeIllFormed(text: string): string {
  return text.isWellFormed() && !text.includes('\u0000')
    ? text
    : [...text]
        .map((c) => (c === '\u0000' || !c.isWellFormed() ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c))
        .join('');
}

/**
 * `text` cut to at most `max` code points, the unit PostgreSQL's varchar(n) and char_length count,
 * never between the two halves of a surrogate pair.
 */
export function cutToCodePoints(text: string, max: number): string {
  // A code point is one or two units: text no longer in units than `max` is no longer in code points.
  if (text.length <= max) return text;
  let units = 0;
  for (let points = 0; points < max && units < text.length; points++) {
    const unit = text.charCodeAt(units);
    const next = text.charCodeAt(units + 1);
    units += unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
  }
  return text.slice(0, units);
}

/**
 * The explicit directional formatting characters of Unicode's bidirectional algorithm (UAX #9):
 * the embeddings and overrides U+202A–U+202E and the isolates U+2066–U+2069. Invisible, they
 * reorder the text after them as another person reads it; refused in text shown to other people
 * (docs/decisions/0362-bidi-controls-in-text-shown-to-others.md).
 */
export const NO_BIDI_CONTROLS = /^[^\u202A-\u202E\u2066-\u2069]*$/;
