import { loadCorpus, replyOf } from './packages/providers/test/corpus.ts';
import { classifyReply } from './packages/providers/src/classify.ts';
const corpus = loadCorpus().filter((e) => e.channel !== 'http');
const variants: Record<string, (t: string) => string | undefined> = {
  smtpPrefix: (t) => `smtp; ${t}`,
  postfixDsn: (t) => `host mx.example.net[192.0.2.10] said: ${t} (in reply to RCPT TO command)`,
  remoteSaid: (t) => `Remote host said: ${t}`,
  multiline: (t) => {
    const m = /^([245]\d\d)[ -](?:([245]\.\d{1,3}\.\d{1,3}) )?(.*)$/s.exec(t);
    if (!m) return undefined;
    const words = m[3].split(' ');
    if (words.length < 6) return undefined;
    const half = Math.floor(words.length / 2);
    const enh = m[2] ? `${m[2]} ` : '';
    return `${m[1]}-${enh}${words.slice(0, half).join(' ')}\r\n${m[1]} ${enh}${words.slice(half).join(' ')}`;
  },
  upper: (t) => t.toUpperCase(),
  noReceiver: (t) => t,
};
for (const [name, f] of Object.entries(variants)) {
  let n = 0, changed = 0, severeish = 0; const ex: string[] = [];
  for (const e of corpus) {
    const base = replyOf(e);
    const t = f(e.reply); if (t === undefined) continue;
    n++;
    const r = { ...base, text: t };
    if (name === 'noReceiver') delete (r as any).receiver;
    const got = classifyReply(r).family;
    if (got !== e.family) { changed++; if (ex.length < 40) ex.push(`${e.family} -> ${got} | ${e.receiver} | ${e.reply.slice(0, 100)}`); }
  }
  console.log(`${name}: ${changed}/${n} change (${(100 * changed / n).toFixed(1)}%)`);
  if (process.argv[2] === name) console.log(ex.join('\n'));
}
