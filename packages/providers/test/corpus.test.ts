import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { classifyReply, FAMILIES } from '../src/classify.js';
import { heldOut, loadCorpus, replyOf, score, severe } from './corpus.js';

const corpus = loadCorpus();
const scored = score(corpus);
// The name carries the receiver, the reply's start and its source, so a failure says where the text came from.
const named = scored.map((s) => [`${s.entry.receiver}: ${s.entry.reply.slice(0, 70)} [${s.entry.source}]`, s] as const);

describe('the reply corpus', () => {
  it('holds at least 500 real replies from at least 40 receivers, every family among them', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(500);
    expect(new Set(corpus.map((e) => e.receiver)).size).toBeGreaterThanOrEqual(40);
    expect(FAMILIES.filter((f) => !corpus.some((e) => e.family === f))).toEqual([]);
  });

  it('holds back about a fifth, chosen by the text alone', () => {
    const held = corpus.filter(heldOut).length / corpus.length;
    expect(held).toBeGreaterThan(0.15);
    expect(held).toBeLessThan(0.25);
  });

  it.each(named)('%s', (_name, { entry, got }) => {
    expect(got.family, entry.note).toBe(entry.family);
  });

  // How a reply reaches us quoted: an ESP event's or a DSN's Diagnostic-Code, a relay's Postfix
  // DSN, another MTA's bounce, Exchange's report, a reply over continuation lines or without its full stop.
  const quoted: readonly [how: string, quote: (reply: string) => string | undefined][] = [
    ['smtp;', (r) => `smtp; ${r}`],
    [
      "Postfix's host … said: … (in reply to)",
      (r) => `host mx.example.net[192.0.2.10] said: ${r} (in reply to RCPT TO command)`,
    ],
    ['Remote host said:', (r) => `Remote host said: ${r}`],
    ["Exchange's Remote Server returned '…'", (r) => `Remote Server returned '${r}'`],
    ['with or without its closing full stop', (r) => (/[.!]$/.test(r) ? r.slice(0, -1) : `${r}.`)],
    [
      'continuation lines',
      (r) => {
        const m = /^([245]\d\d) (?:([245]\.\d{1,3}\.\d{1,3}) )?(\S+(?: \S+){5,})$/.exec(r);
        if (m === null) return undefined;
        const [, basic, enhanced, words] = m as unknown as [string, string, string | undefined, string];
        const at = words.split(' ');
        const half = Math.floor(at.length / 2);
        const code = enhanced === undefined ? '' : `${enhanced} `;
        return `${basic}-${code}${at.slice(0, half).join(' ')}\r\n${basic} ${code}${at.slice(half).join(' ')}`;
      },
    ],
  ];
  it.each(quoted)('reads every SMTP reply the same when it comes quoted: %s', (_how, quote) => {
    const misread = corpus
      .filter((e) => e.channel !== 'http')
      .flatMap((e) => {
        const text = quote(e.reply);
        if (text === undefined) return [];
        const got = classifyReply({ ...replyOf(e), text }).family;
        return got === e.family ? [] : [`${e.family} → ${got}: ${text}`];
      });
    expect(misread).toEqual([]);
  });

  it('has no severe misread anywhere', () => {
    expect(scored.filter((s) => severe(s.entry.family, s.got.family)).map((s) => s.entry.reply)).toEqual([]);
  });
});

describe('the severe-misread test', () => {
  it('is a deferral read as permanent, or a verdict on the sender read as a bad address', () => {
    expect(severe('throttled', 'policy_block')).toBe(true);
    expect(severe('mailbox_temporary', 'mailbox_full')).toBe(true);
    expect(severe('policy_block', 'bad_recipient')).toBe(true);
    expect(severe('policy_block', 'throttled')).toBe(false);
    expect(severe('bad_recipient', 'unknown')).toBe(false);
  });
});

describe('loading the corpus', () => {
  const load = (lines: unknown[]): (() => unknown) => {
    const file = join(mkdtempSync(join(tmpdir(), 'corpus-')), 'replies.jsonl');
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
    return () => loadCorpus(pathToFileURL(file));
  };
  const entry = {
    reply: '550 5.1.1 No such user',
    receiver: 'postfix',
    via: 'smtp',
    family: 'bad_recipient',
    source: 'https://example.org/x',
  };

  it('names the line and the field of a bad entry', () => {
    expect(load([entry, { ...entry, reply: '550 other', family: 'gone' }])).toThrow(/line 2: family "gone"/);
    expect(load([{ ...entry, source: '' }])).toThrow(/line 1: source/);
  });

  it('refuses the same reply twice, whatever its spacing and case', () => {
    expect(load([entry, { ...entry, reply: '550  5.1.1 no such USER' }])).toThrow(/line 2: the same reply as line 1/);
  });
});
