import { z } from 'zod';
import { shownText } from '../../lib/shown-text';
import { cutToCodePoints, escapeIllFormed, illFormed } from '../../lib/text';

/** Text counted and cut as the database counts it (docs/decisions/0361-text-counted-and-cut-in-characters.md). */
describe('cutToCodePoints', () => {
  it('keeps an emoji whole where it crosses the cut: 200 characters, not 199 and half of one', () => {
    const cut = cutToCodePoints(`${'a'.repeat(199)}😀 and more`, 200);
    expect(cut).toBe(`${'a'.repeat(199)}😀`);
    expect(cut.isWellFormed()).toBe(true);
    expect([...cut]).toHaveLength(200);
  });

  it('counts characters, not UTF-16 units: 200 emoji are 200 characters', () => {
    const emoji = '😀'.repeat(250);
    expect(cutToCodePoints(emoji, 200)).toBe('😀'.repeat(200));
  });

  it('leaves text at or under the limit as it is, and cuts plain text like slice', () => {
    expect(cutToCodePoints('short', 200)).toBe('short');
    expect(cutToCodePoints('😀'.repeat(3), 3)).toBe('😀😀😀');
    expect(cutToCodePoints('abcdef', 3)).toBe('abc');
    expect(cutToCodePoints('abc', 0)).toBe('');
  });

  it('counts a lone surrogate as one character and never joins it to its neighbour', () => {
    expect(cutToCodePoints('\ud800abc', 2)).toBe('\ud800a');
    expect(cutToCodePoints('a\udc00\ud800b', 3)).toBe('a\udc00\ud800');
  });
});

describe('illFormed', () => {
  it.each([
    ['a lone high surrogate', 'x\ud800', 'lone_surrogate'],
    ['a lone low surrogate', '\udc00x', 'lone_surrogate'],
    ['a pair cut in half', '😀'.slice(0, 1), 'lone_surrogate'],
    ['NUL', 'a\u0000', 'nul'],
  ])('finds %s', (_what, text, kind) => {
    expect(illFormed(text)?.kind).toBe(kind);
  });

  it('names the lone surrogate it found', () => {
    expect(illFormed('😀x\udc00')).toEqual({ kind: 'lone_surrogate', unit: 0xdc00 });
  });

  it('passes every well-formed string: emoji, right-to-left text, bidi controls (those are a schema rule)', () => {
    for (const text of ['', '😀', 'שלום\u200F', 'a\u202Eb', '\uFFFD']) expect(illFormed(text)).toBeUndefined();
  });

  it('writes NUL and lone surrogates as escapes, and nothing else', () => {
    expect(escapeIllFormed('k\ud800\u0000😀')).toBe('k\\ud800\\u0000😀');
    expect(escapeIllFormed('plain 😀')).toBe('plain 😀');
  });
});

describe('limits in characters', () => {
  it("zod's max counts code points, as varchar(n) and JSON Schema's maxLength do", () => {
    // A zod that counted UTF-16 units would refuse the first and pass text PostgreSQL counts as 6.
    expect(z.string().max(5).safeParse('aaaa😀').success).toBe(true);
    expect(z.string().max(5).safeParse('aaaaa😀').success).toBe(false);
    expect(z.string().min(2).safeParse('😀').success).toBe(false);
  });

  it('shownText takes a 4-byte character at its limit, refuses one more, and refuses bidi controls', () => {
    const name = shownText(10);
    expect(name.safeParse(`${'a'.repeat(9)}😀`).success).toBe(true);
    expect(name.safeParse(`${'a'.repeat(10)}😀`).success).toBe(false);
    for (const control of ['\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069'])
      expect(name.safeParse(`a${control}b`).success).toBe(false);
    // Right-to-left text needs none: the script orders itself; the marks stay available.
    expect(name.safeParse('שלום\u200F עולם').success).toBe(true);
  });
});
