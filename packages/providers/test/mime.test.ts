import libmime from 'libmime';
import { describe, expect, it } from 'vitest';
import { formatAddress } from '../src/internal/mime.js';

const ENCODED_WORD = /=\?UTF-8\?B\?[A-Za-z0-9+/=]*\?=/g;

/** The display name part of `name <addr>`, and its encoded words. */
function parts(formatted: string): { name: string; words: string[] } {
  const name = formatted.slice(0, formatted.lastIndexOf(' <'));
  return { name, words: name.match(ENCODED_WORD) ?? [] };
}

describe('formatAddress', () => {
  it('quotes a plain ASCII name, escaping quotes and backslashes', () => {
    expect(formatAddress({ address: 'a@b.test', name: 'Shop "Best" \\ Co' })).toBe(
      '"Shop \\"Best\\" \\\\ Co" <a@b.test>',
    );
    expect(formatAddress({ address: 'a@b.test' })).toBe('a@b.test');
  });

  it('encodes a short non-ASCII name as one encoded word that decodes back', () => {
    const formatted = formatAddress({ address: 'a@b.test', name: 'Zoë' });
    const { name, words } = parts(formatted);
    expect(words).toHaveLength(1);
    expect(libmime.decodeWords(name)).toBe('Zoë');
    expect(formatted.endsWith(' <a@b.test>')).toBe(true);
  });

  it('splits a long non-ASCII name into encoded words of at most 75 characters, on whole characters', () => {
    const long = 'Ünïcödé Ēxpörts — Ελληνικά καταστήματα και 日本の店舗 😀 Société Générale des Œuvres';
    const { name, words } = parts(formatAddress({ address: 'news@shop.test', name: long }));
    expect(words.length).toBeGreaterThan(1);
    for (const word of words) expect(word.length).toBeLessThanOrEqual(75);
    // Nothing but encoded words and the spaces between them.
    expect(name.replace(ENCODED_WORD, '').trim()).toBe('');
    // Each word holds whole characters: it decodes on its own without a replacement character.
    for (const word of words) expect(libmime.decodeWords(word)).not.toContain('\uFFFD');
    expect(libmime.decodeWords(name)).toBe(long);
  });
});
