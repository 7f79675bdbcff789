import { createReadStream, statSync } from 'node:fs';
import { extname } from 'node:path';
import { createInterface } from 'node:readline';
import { parse } from 'csv-parse';
import { SluiceError } from '@sluice/core';
import type { InjectProgress, RecipientInput } from '@sluice/client';
import { JSON_OPTION, UsageError } from '../args.js';
import type { Command, Context } from '../context.js';
import { json } from '../format.js';

type Format = 'ndjson' | 'csv';

/** The format of a recipients file: `--format`, else its extension. */
function formatOf(file: string, given: string | boolean | undefined): Format {
  if (given === 'ndjson' || given === 'csv') return given;
  if (given !== undefined)
    throw new UsageError(`--format: must be ndjson or csv, not ${String(given)}`, 'campaigns inject');
  const ext = extname(file).toLowerCase();
  if (ext === '.csv') return 'csv';
  if (ext === '.ndjson' || ext === '.jsonl' || ext === '.json') return 'ndjson';
  throw new UsageError(
    `<file>: cannot tell its format from "${ext || 'no extension'}": give --format ndjson|csv`,
    'campaigns inject',
  );
}

/** Counts the bytes read from a file, for the progress bar. */
function countedStream(file: string, read: { bytes: number }) {
  const stream = createReadStream(file);
  stream.on('data', (chunk) => (read.bytes += chunk.length));
  return stream;
}

/**
 * NDJSON: one recipient object a line (blank lines skipped). The first `skip` recipients are
 * passed over without being parsed: they were accepted before.
 */
async function* ndjson(file: string, skip: number, read: { bytes: number }): AsyncGenerator<RecipientInput> {
  let position = 0;
  let line = 0;
  for await (const text of createInterface({ input: countedStream(file, read), crlfDelay: Infinity })) {
    line++;
    if (text.trim() === '') continue;
    if (position++ < skip) continue;
    try {
      yield JSON.parse(text) as RecipientInput;
    } catch (cause) {
      throw new SluiceError(
        'invalid_recipient',
        `invalid recipient: recipients.${position - 1}: line ${line} of ${file} is not JSON`,
        {
          path: `recipients.${position - 1}`,
          cause,
        },
      );
    }
  }
}

/**
 * CSV with a header row: `to` (required), `key` and `cursor` are the recipient's own; every
 * other column is a merge variable of its `data`.
 */
async function* csv(file: string, skip: number, read: { bytes: number }): AsyncGenerator<RecipientInput> {
  let position = 0;
  const rows = countedStream(file, read).pipe(parse({ columns: true, bom: true, skip_empty_lines: true, trim: true }));
  for await (const row of rows as AsyncIterable<Record<string, string>>) {
    if (position++ < skip) continue;
    const { to, key, cursor, ...data } = row;
    const r: Record<string, unknown> = { to };
    if (key) r.key = key;
    if (cursor) r.cursor = cursor;
    if (Object.keys(data).length > 0) r.data = data;
    yield r as RecipientInput;
  }
}

/** The progress line: a bar on a terminal, a line every few seconds otherwise. */
function progressPrinter(ctx: Context, size: number, read: { bytes: number }, tty: boolean) {
  let last = 0;
  const started = Date.now();
  let startPosition: number | undefined;
  return (p: InjectProgress, force = false): void => {
    const now = Date.now();
    if (!force && now - last < (tty ? 200 : 5_000)) return;
    last = now;
    startPosition ??= p.cursor.position - p.accepted;
    const share = size === 0 ? 1 : Math.min(1, read.bytes / size);
    const rate = ((p.cursor.position - startPosition) * 1000) / Math.max(1, now - started);
    const bar = `[${'#'.repeat(Math.round(share * 30)).padEnd(30, '.')}]`;
    const waiting = p.waiting ? ` · waiting for ${p.waiting === 'window' ? "the campaign's window" : p.waiting}` : '';
    const text = `${bar} ${(share * 100).toFixed(1)}% · ${p.cursor.position.toLocaleString('en')} accepted · ${Math.round(rate).toLocaleString('en')}/s · window ${p.window.pending.toLocaleString('en')}/${p.window.max.toLocaleString('en')}${waiting}`;
    ctx.io.stderr(tty ? `\r${text.padEnd(110)}` : `${text}\n`);
  };
}

const inject: Command = {
  path: ['campaigns', 'inject'],
  usage: '<id> <file.ndjson|file.csv> [--format ndjson|csv] [--invalid stop|reject] [--json]',
  summary: "stream a campaign's recipients from a file; run it again to resume where it stopped",
  description: [
    'Each recipient is an NDJSON line `{"to": …, "data": {…}, "key": …}` or a CSV row with a header',
    '(`to`, optional `key` and `cursor`, every other column a merge variable). The campaign must have',
    'content (`campaigns.create({ content })`). Recipients go in as fast as the campaign is admitted:',
    "the command waits while the campaign's window in Redis is full, with a progress bar on stderr.",
    "It starts at the campaign's cursor: after a crash, Ctrl-C or a Redis outage, run the same",
    'command again and it goes on with none skipped and none sent twice (the file must not change).',
    '',
    'Example:',
    '  sluice campaigns inject spring-sale recipients.csv',
  ],
  args: [
    { name: 'id', help: 'the campaign id' },
    { name: 'file', help: 'the recipients, NDJSON (.ndjson, .jsonl) or CSV (.csv)' },
  ],
  options: {
    format: { type: 'string', value: 'ndjson|csv', help: 'the file format (default: from its extension)' },
    invalid: {
      type: 'string',
      value: 'stop|reject',
      help: 'a bad recipient stops the command there (default), or is recorded as rejected',
    },
    ...JSON_OPTION,
  },
  async run(ctx, { args, values }) {
    const id = args.id!;
    const file = args.file!;
    const format = formatOf(file, values.format);
    const invalid = values.invalid ?? 'stop';
    if (invalid !== 'stop' && invalid !== 'reject')
      throw new UsageError(`--invalid: must be stop or reject, not ${String(invalid)}`, 'campaigns inject');
    let size: number;
    try {
      size = statSync(file).size;
    } catch (cause) {
      throw new UsageError(`<file>: cannot read ${file}: ${(cause as Error).message}`, 'campaigns inject');
    }
    const client = await ctx.client();
    const from = (await client.campaigns.status(id)).cursor.position;
    const read = { bytes: 0 };
    const recipients = format === 'csv' ? csv(file, from, read) : ndjson(file, from, read);
    const tty = process.stderr.isTTY && !ctx.json;
    const show = progressPrinter(ctx, size, read, tty);
    const stop = new AbortController();
    const onSignal = (): void => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      const result = await client.campaigns.inject(id, recipients, {
        from,
        invalid,
        signal: stop.signal,
        onProgress: (p) => show(p),
      });
      if (tty) ctx.io.stderr('\n');
      ctx.print(
        ctx.json
          ? json({ id, ...result, resumedFrom: from })
          : `campaign ${id}: ${result.accepted.toLocaleString('en')} recipients accepted (resumed at ${from.toLocaleString('en')}), ${result.rejected} rejected, ${result.expired} not injected (receiver stopped); cursor ${result.cursor.position.toLocaleString('en')}`,
      );
      return 0;
    } catch (error) {
      if (tty) ctx.io.stderr('\n');
      const at = (await client.campaigns.status(id).catch(() => undefined))?.cursor.position;
      if (at !== undefined)
        ctx.io.stderr(
          `stopped with ${at.toLocaleString('en')} recipients accepted: run the same command again to resume\n`,
        );
      throw error;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};

/** `sluice campaigns inject` */
export const injectCommands: readonly Command[] = [inject];
