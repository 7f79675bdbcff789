import { expect, it } from 'vitest';
import { ndjsonRecipients } from '../src/ingest/recipients.js';

async function* chunks(...parts: Buffer[]) {
  for (const p of parts) yield p;
}
const read = async (source: AsyncIterable<Buffer>, from = 0) => {
  const out: unknown[] = [];
  for await (const r of ndjsonRecipients(source, from)) out.push(r);
  return out;
};

it('reads lines cut anywhere between chunks, a character split in two included, and passes over empty lines', async () => {
  const body = Buffer.from('{"to":"a@x.test","data":{"name":"Zoë 日本"}}\n\n{"to":"b@x.test"}\r\n{"to":"c@x.test"}');
  // Every cut, each one inside the multi-byte characters too.
  for (let cut = 1; cut < body.length; cut++) {
    expect(await read(chunks(body.subarray(0, cut), body.subarray(cut)))).toEqual([
      { to: 'a@x.test', data: { name: 'Zoë 日本' } },
      { to: 'b@x.test' },
      { to: 'c@x.test' },
    ]);
  }
});

it('names the position of a line that is not JSON, counting from the cursor', async () => {
  await expect(read(chunks(Buffer.from('{"to":"a@x.test"}\n{oops\n')), 40)).rejects.toMatchObject({
    code: 'invalid_recipient',
    path: 'recipients.41',
  });
});
