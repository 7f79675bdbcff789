import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GMAIL_THROTTLE_REPLY, loadScenarioFile, parseScenario, ScenarioError } from '../src/index.js';
import { settle, sesClient, simpleEmail, startSandbox } from './helpers.js';

/** What every domain behaviour holds when the scenario leaves it out. */
const DEFAULTS = {
  latencyMs: 0,
  bounce: [],
  block: [],
  busyRecipient: [],
  defer: [],
  fail: [],
  greylist: false,
  dropAfterData: [],
  dropBeforeData: [],
  throttleReply: GMAIL_THROTTLE_REPLY,
  bounceRate: 0,
  complaintRate: 0,
};

function pathOf(input: unknown): string {
  try {
    parseScenario(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ScenarioError);
    return (error as ScenarioError).path;
  }
  throw new Error('expected the scenario to be invalid');
}

describe('parseScenario', () => {
  it('fills in defaults, burst = max(1, rate), and lower-cases domains', () => {
    expect(parseScenario(undefined)).toEqual({
      account: { maxSendRate: 1000, max24HourSend: 1_000_000, sendingEnabled: true },
      default: DEFAULTS,
      domains: {},
      silence: { http: [], deliver: true },
      webhooks: { reportDelayMs: 200, reportDeliveries: false, redeliveries: 10 },
    });
    const scenario = parseScenario({ default: { rate: 0.5 }, domains: { 'Example.COM': { rate: 20, latencyMs: 5 } } });
    expect(scenario.default).toEqual({ ...DEFAULTS, rate: 0.5, burst: 1 });
    expect(scenario.domains).toEqual({ 'example.com': { ...DEFAULTS, latencyMs: 5, rate: 20, burst: 20 } });
  });

  it('names the path of a bad field', () => {
    expect(pathOf({ domains: { 'example.com': { rate: -1 } } })).toBe('domains.example.com.rate');
    expect(pathOf({ domains: { 'example.com': { rate: 'fast' } } })).toBe('domains.example.com.rate');
    expect(pathOf({ default: { bounce: ['nobody'] } })).toBe('default.bounce.0');
    expect(pathOf({ account: { maxSendRate: 0 } })).toBe('account.maxSendRate');
    expect(pathOf({ domains: { 'not a domain': {} } })).toBe('domains.not a domain');
    expect(pathOf([])).toBe('(root)');
  });

  it('validates the receiver behaviours, naming the bad field', () => {
    expect(pathOf({ default: { block: ['nobody'] } })).toBe('default.block.0');
    expect(pathOf({ domains: { 'example.com': { defer: 'a@example.com' } } })).toBe('domains.example.com.defer');
    expect(pathOf({ domains: { 'example.com': { fail: [''] } } })).toBe('domains.example.com.fail.0');
    expect(pathOf({ domains: { 'example.com': { greylist: 'yes' } } })).toBe('domains.example.com.greylist');
    expect(pathOf({ default: { dropAfterData: [1] } })).toBe('default.dropAfterData.0');
    expect(pathOf({ default: { dropBeforeData: ['x'] } })).toBe('default.dropBeforeData.0');
    for (const reply of ['250 OK', '421', 'too fast', '421 4.7.0 two\nlines', 421]) {
      expect(pathOf({ domains: { 'example.com': { throttleReply: reply } } })).toBe(
        'domains.example.com.throttleReply',
      );
    }
    expect(() => parseScenario({ default: { throttleReply: '250 OK' } })).toThrow(
      'invalid scenario at default.throttleReply: must be an SMTP reply "<4xx|5xx> <text>"',
    );
    const scenario = parseScenario({
      domains: {
        'example.com': {
          block: ['b@example.com'],
          defer: ['d-*@example.com'],
          fail: ['f@example.com'],
          greylist: true,
          dropAfterData: ['x@example.com'],
          dropBeforeData: ['y@example.com'],
          throttleReply: '450 4.2.1 Slow down',
        },
      },
    });
    expect(scenario.domains['example.com']).toEqual({
      ...DEFAULTS,
      block: ['b@example.com'],
      defer: ['d-*@example.com'],
      fail: ['f@example.com'],
      greylist: true,
      dropAfterData: ['x@example.com'],
      dropBeforeData: ['y@example.com'],
      throttleReply: '450 4.2.1 Slow down',
    });
  });

  it('validates the rates and webhook targets', () => {
    expect(pathOf({ domains: { 'example.com': { bounceRate: 1.5 } } })).toBe('domains.example.com.bounceRate');
    expect(pathOf({ default: { complaintRate: -0.1 } })).toBe('default.complaintRate');
    expect(pathOf({ webhooks: { sendgrid: { url: 'not a url' } } })).toBe('webhooks.sendgrid.url');
    expect(pathOf({ webhooks: { ses: { url: 'http://127.0.0.1:1/ses' } } })).toBe('webhooks.ses.topicArn');
    expect(pathOf({ webhooks: { postmark: {} } })).toBe('webhooks.postmark');
    const targets = {
      sendgrid: { url: 'http://127.0.0.1:1/sg' },
      reportDelayMs: 5,
      reportDeliveries: true,
      redeliveries: 10,
    };
    expect(parseScenario({ webhooks: targets }).webhooks).toEqual(targets);
  });

  it('rejects unknown keys, naming them', () => {
    expect(pathOf({ domains: { 'example.com': { ratee: 5 } } })).toBe('domains.example.com.ratee');
    expect(pathOf({ acount: {} })).toBe('acount');
    expect(() => parseScenario({ domains: { 'example.com': { ratee: 5 } } })).toThrow(
      'invalid scenario at domains.example.com.ratee: unknown key',
    );
  });

  it('loads a YAML file and names the file and path when it is invalid', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-scenario-'));
    try {
      const good = join(dir, 'good.yaml');
      await writeFile(
        good,
        'account:\n  maxSendRate: 5\ndomains:\n  example.com: { latencyMs: 20, rate: 20, bounce: ["nobody@example.com"] }\n',
      );
      expect((await loadScenarioFile(good)).domains['example.com']).toEqual({
        ...DEFAULTS,
        latencyMs: 20,
        rate: 20,
        burst: 20,
        bounce: ['nobody@example.com'],
      });
      const bad = join(dir, 'bad.yaml');
      await writeFile(bad, 'domains:\n  example.com:\n    rate: lots\n');
      await expect(loadScenarioFile(bad)).rejects.toThrow(/bad\.yaml: invalid scenario at domains\.example\.com\.rate/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('setScenario', () => {
  it('replaces behaviour live and refuses an invalid scenario, keeping the old one', async () => {
    const sandbox = await startSandbox();
    const ses = sesClient(sandbox.url);
    await ses.send(simpleEmail('x@example.com'));

    sandbox.setScenario({ domains: { 'example.com': { bounce: ['x@example.com'] } } });
    await expect(ses.send(simpleEmail('x@example.com'))).rejects.toMatchObject({ name: 'MessageRejected' });

    expect(() => sandbox.setScenario({ domains: { 'example.com': { burst: 'x' } } })).toThrow(ScenarioError);
    await expect(ses.send(simpleEmail('x@example.com'))).rejects.toMatchObject({ name: 'MessageRejected' });
    expect(sandbox.stats()).toMatchObject({ accepted: 1, rejected: 2 });
  });

  it('reset() forgets records and refills buckets', async () => {
    const sandbox = await startSandbox({ scenario: { default: { rate: 0.001, burst: 1 } } });
    const ses = sesClient(sandbox.url);
    await ses.send(simpleEmail('a@example.com'));
    await expect(ses.send(simpleEmail('a@example.com'))).rejects.toMatchObject({ name: 'TooManyRequestsException' });

    sandbox.reset();
    expect(sandbox.stats()).toEqual({
      accepted: 0,
      throttled: 0,
      rejected: 0,
      deferred: 0,
      dropped: 0,
      duplicates: 0,
      webhooksSent: 0,
      webhooksFailed: 0,
      webhooksRedelivered: 0,
      byDomain: {},
    });
    const { ok } = await settle([ses.send(simpleEmail('a@example.com'))]);
    expect(ok).toHaveLength(1);
  });
});
