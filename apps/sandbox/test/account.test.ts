import { GetAccountCommand } from '@aws-sdk/client-sesv2';
import { expect, it } from 'vitest';
import { sesClient, simpleEmail, startSandbox } from './helpers.js';

it("GetAccount reports the scenario's quota and what was accepted", async () => {
  const sandbox = await startSandbox({
    scenario: { account: { maxSendRate: 50, max24HourSend: 2000, sendingEnabled: false } },
  });
  const ses = sesClient(sandbox.url);
  await ses.send(simpleEmail('a@example.com'));
  await ses.send(simpleEmail('b@example.com'));

  const account = await ses.send(new GetAccountCommand({}));
  expect(account.SendQuota).toEqual({ Max24HourSend: 2000, MaxSendRate: 50, SentLast24Hours: 2 });
  expect(account).toMatchObject({
    ProductionAccessEnabled: true,
    SendingEnabled: false,
    EnforcementStatus: 'HEALTHY',
    DedicatedIpAutoWarmupEnabled: false,
    Details: { MailType: 'TRANSACTIONAL' },
  });
});

it('GetAccount has defaults without a scenario', async () => {
  const sandbox = await startSandbox();
  const account = await sesClient(sandbox.url).send(new GetAccountCommand({}));
  expect(account.SendQuota).toEqual({ Max24HourSend: 1_000_000, MaxSendRate: 1000, SentLast24Hours: 0 });
  expect(account.SendingEnabled).toBe(true);
});

it('refuses SES sends beyond Max24HourSend with "Daily message quota exceeded", counting only SES', async () => {
  const sandbox = await startSandbox({ scenario: { account: { max24HourSend: 2 } } });
  const ses = sesClient(sandbox.url);
  await ses.send(simpleEmail('a@example.com'));
  await ses.send(simpleEmail('b@example.com'));
  const error = await ses.send(simpleEmail('c@example.com')).catch((e: unknown) => e);
  expect(error).toMatchObject({
    name: 'LimitExceededException',
    message: 'Daily message quota exceeded.',
    $metadata: { httpStatusCode: 400 },
  });
  expect(sandbox.stats()).toMatchObject({ accepted: 2, throttled: 1 });
  const account = await ses.send(new GetAccountCommand({}));
  expect(account.SendQuota).toMatchObject({ Max24HourSend: 2, SentLast24Hours: 2 });
});
