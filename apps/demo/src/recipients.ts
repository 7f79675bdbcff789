import type { MessageInput } from '@sluice/client';

/** The sender of every demo message. */
export const DEMO_FROM = 'Sluice Demo <demo@sluice.test>';

/**
 * Recipient domains of the demo and their share of the newsletter, in percent. gmail and
 * yahoo carry most of it so their receiver policies (config/demo.yaml) are what binds.
 */
export const DEMO_DOMAINS: readonly { domain: string; weight: number }[] = [
  { domain: 'gmail.test', weight: 40 },
  { domain: 'yahoo.test', weight: 25 },
  { domain: 'outlook.test', weight: 15 },
  { domain: 'icloud.test', weight: 10 },
  { domain: 'example.test', weight: 10 },
];

/**
 * Every this many newsletter recipients, one is a `bounce-<n>@…` address that the
 * sandbox hard-bounces (config/demo-scenario.yaml), so `rejected` shows up.
 */
export const BOUNCE_EVERY = 250;

/** Domains whose `bounce-*` addresses the demo scenario bounces. */
const BOUNCE_DOMAINS = ['example.test', 'outlook.test'] as const;

const TOTAL_WEIGHT = DEMO_DOMAINS.reduce((sum, d) => sum + d.weight, 0);

function domainAt(slot: number): string {
  let left = slot % TOTAL_WEIGHT;
  for (const { domain, weight } of DEMO_DOMAINS) {
    if (left < weight) return domain;
    left -= weight;
  }
  return DEMO_DOMAINS[0]!.domain;
}

/**
 * The newsletter's `i`-th recipient. Deterministic, and spread over the domains in
 * proportion to their weights, interleaved, so every chunk has the same mix.
 */
export function newsletterRecipient(i: number): string {
  if (i % BOUNCE_EVERY === BOUNCE_EVERY - 1) {
    const domain = BOUNCE_DOMAINS[Math.floor(i / BOUNCE_EVERY) % BOUNCE_DOMAINS.length]!;
    return `bounce-${i}@${domain}`;
  }
  // A stride coprime to 100 interleaves the domains instead of sending them in runs.
  return `reader${i}@${domainAt(i * 37)}`;
}

/** A random recipient for an OTP: never a bouncing address. */
export function randomOtpRecipient(random: () => number = Math.random): string {
  const domain = domainAt(Math.floor(random() * TOTAL_WEIGHT));
  return `user${Math.floor(random() * 100_000)}@${domain}`;
}

/** The newsletter message for one recipient. */
export function newsletterMessage(to: string, campaignId: string): MessageInput {
  return {
    from: DEMO_FROM,
    to,
    subject: 'The Sluice Gazette: issue 1',
    text: 'Hello,\n\nThis is the Sluice demo newsletter. It goes out as fast as every receiver allows.\n',
    // Named here too, so the class holds whether or not the client applies the campaign's.
    priority: 'low',
    stream: 'marketing',
    campaignId,
  };
}

/** A one-time-password message: the critical mail that must not wait behind the newsletter. */
export function otpMessage(to: string, code: string, expiresAt: number): MessageInput {
  return {
    from: DEMO_FROM,
    to,
    subject: `Your sign-in code is ${code}`,
    text: `Your Sluice Demo sign-in code is ${code}. It expires in 5 minutes.\n`,
    priority: 'critical',
    expiresAt,
  };
}
