import { GetAccountCommand } from '@aws-sdk/client-sesv2';
import { describe, expect, it } from 'vitest';
import { Recorder, type AcceptedMessage } from '../src/recorder.js';
import { sesClient, simpleEmail, startSandbox } from './helpers.js';

function arrival(arrivedAt: number, protocol: AcceptedMessage['protocol'] = 'ses'): AcceptedMessage {
  return {
    protocol,
    providerMessageId: `p-${arrivedAt}`,
    messageId: undefined,
    sluiceId: `s-${arrivedAt}`,
    from: 'a@sluice.test',
    to: ['b@example.com'],
    subject: 's',
    domain: 'example.com',
    arrivedAt,
    tags: {},
  };
}

describe("a sandbox started with keep: 'counts'", () => {
  it('counts arrivals and duplicates, enforces the daily quota, and keeps no message', async () => {
    const sandbox = await startSandbox({ keep: 'counts', scenario: { account: { max24HourSend: 30 } } });
    const ses = sesClient(sandbox.url);
    const before = Date.now();
    await Promise.all(
      Array.from({ length: 25 }, (_, i) => ses.send(simpleEmail(`r${i}@example.com`, { sluiceId: `c_${i}` }))),
    );
    // Sent again: the duplicate key is kept even though the message is not.
    await ses.send(simpleEmail('r3@example.com', { sluiceId: 'c_3' }));
    await Promise.all(Array.from({ length: 4 }, (_, i) => ses.send(simpleEmail(`s${i}@example.org`))));
    const refused = await ses.send(simpleEmail('late@example.com')).catch((e: unknown) => e);
    expect(refused).toMatchObject({ name: 'LimitExceededException' });

    const stats = sandbox.stats();
    expect(stats).toMatchObject({ accepted: 30, duplicates: 1, throttled: 1 });
    expect(stats.byDomain['example.org']).toMatchObject({ accepted: 4 });
    expect(stats.firstArrivedAt).toBeGreaterThanOrEqual(before);
    expect(stats.lastArrivedAt).toBeGreaterThanOrEqual(stats.firstArrivedAt!);
    expect(stats.lastArrivedAt).toBeLessThanOrEqual(Date.now());
    const account = await ses.send(new GetAccountCommand({}));
    expect(account.SendQuota).toMatchObject({ Max24HourSend: 30, SentLast24Hours: 30 });

    expect(() => sandbox.accepted()).toThrow(/keep: 'counts'/);
    const listed = await fetch(`${sandbox.url}/_sandbox/accepted`);
    expect(listed.status).toBe(409);
    expect(((await listed.json()) as { message: string }).message).toMatch(/--keep counts/);

    sandbox.reset();
    expect(sandbox.stats()).toMatchObject({ accepted: 0, duplicates: 0 });
    expect(sandbox.stats().firstArrivedAt).toBeUndefined();
  });
});

describe('the recorder', () => {
  it('counts arrivals since a time, per protocol, when answers come back out of arrival order', () => {
    const recorder = new Recorder();
    for (const at of [100, 300, 200, 400, 350]) recorder.accept(arrival(at));
    recorder.accept(arrival(250, 'smtp'));
    expect(recorder.acceptedSince(0)).toBe(6);
    expect(recorder.acceptedSince(250, 'ses')).toBe(3);
    expect(recorder.acceptedSince(250)).toBe(4);
    expect(recorder.acceptedSince(401)).toBe(0);
    expect(recorder.stats()).toMatchObject({ accepted: 6, firstArrivedAt: 100, lastArrivedAt: 400 });
    // Both modes keep the same counts; 'messages' also lists them, in the order accepted.
    expect(recorder.accepted().map((m) => m.arrivedAt)).toEqual([100, 300, 200, 400, 350, 250]);
  });
});
