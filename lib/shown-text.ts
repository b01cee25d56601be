import { z } from 'zod';
import { NO_BIDI_CONTROLS } from './text';

/**
 * Free text one person writes for other people to read: a name, a description, a reason, a
 * message, a signature. Trimmed; `min` to `max` characters, counted as PostgreSQL counts them (code
 * points: zod's min and max count them so, docs/decisions/0361-text-counted-and-cut-in-characters.md);
 * no bidirectional control character (docs/decisions/0362-bidi-controls-in-text-shown-to-others.md).
 * The document shows the rule as a `pattern`.
 */
export const shownText = (max: number, min = 1) =>
  z
    .string()
    .trim()
    .min(min)
    .max(max)
    .regex(
      NO_BIDI_CONTROLS,
      'must not contain a bidirectional control character (U+202A to U+202E, U+2066 to U+2069): invisible, it reorders what other people read; right-to-left text needs none (the marks U+200E and U+200F are allowed)',
    );
