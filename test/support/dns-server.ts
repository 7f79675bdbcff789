import { createSocket } from 'node:dgram';
import dnsPacket from 'dns-packet';

/** What the server answers for a domain. */
export type DnsAnswer =
  | { mx: readonly { priority: number; exchange: string }[] }
  | 'nxdomain'
  | 'servfail'
  /** Never answers: the client times out. */
  | 'drop';

/** A DNS server on UDP 127.0.0.1 that answers MX queries from a table. */
export interface DnsServer {
  /** `127.0.0.1:<port>`, for `organisations.dnsServers` or `Resolver.setServers`. */
  readonly address: string;
  /** Sets (or replaces) a domain's answer. A domain not in the table is NXDOMAIN. */
  set(domain: string, answer: DnsAnswer): void;
  /** Queries received for a domain (every domain when none is given). */
  queries(domain?: string): number;
  close(): Promise<void>;
}

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 } as const;

/** Starts a DNS server on a free port, answering from `table`. */
export async function startDnsServer(table: Record<string, DnsAnswer> = {}): Promise<DnsServer> {
  const answers = new Map(Object.entries(table).map(([d, a]) => [d.toLowerCase(), a]));
  const counts = new Map<string, number>();
  const socket = createSocket('udp4');
  socket.on('message', (msg, peer) => {
    const query = dnsPacket.decode(msg);
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase();
    counts.set(name, (counts.get(name) ?? 0) + 1);
    const answer = answers.get(name) ?? 'nxdomain';
    if (answer === 'drop') return;
    const rcode = answer === 'nxdomain' ? RCODE.NXDOMAIN : answer === 'servfail' ? RCODE.SERVFAIL : RCODE.NOERROR;
    const reply = dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | rcode,
      questions: [question],
      answers:
        typeof answer === 'object' && question.type === 'MX'
          ? answer.mx.map((r) => ({
              type: 'MX' as const,
              name: question.name,
              ttl: 60,
              data: { preference: r.priority, exchange: r.exchange },
            }))
          : [],
    });
    socket.send(reply, peer.port, peer.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  return {
    address: `127.0.0.1:${socket.address().port}`,
    set(domain, answer) {
      answers.set(domain.toLowerCase(), answer);
    },
    queries(domain) {
      if (domain !== undefined) return counts.get(domain.toLowerCase()) ?? 0;
      return [...counts.values()].reduce((a, b) => a + b, 0);
    },
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}
