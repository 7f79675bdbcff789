import {
  CreateEmailTemplateCommand,
  DeleteEmailTemplateCommand,
  GetEmailTemplateCommand,
  SendBulkEmailCommand,
  type BulkEmailEntry,
} from '@aws-sdk/client-sesv2';
import { describe, expect, it } from 'vitest';
import { settle, sesClient, startSandbox } from './helpers.js';

// SES v2's templates and SendBulkEmail, spoken to by the real SDK: one answer, a result per entry.
const entry = (to: string, sluiceId: string, name: string): BulkEmailEntry => ({
  Destination: { ToAddresses: [to] },
  ReplacementTags: [{ Name: 'sluice_id', Value: sluiceId }],
  ReplacementEmailContent: { ReplacementTemplate: { ReplacementTemplateData: JSON.stringify({ name }) } },
});

describe('SES templates and SendBulkEmail', () => {
  it('stores a template, renders it per entry, and answers each entry on its own', async () => {
    const sandbox = await startSandbox({
      scenario: {
        domains: {
          'example.com': { bounce: ['gone@example.com'] },
          'busy.test': { rate: 0.5, burst: 1 },
        },
      },
    });
    const ses = sesClient(sandbox.url);
    await ses.send(
      new CreateEmailTemplateCommand({
        TemplateName: 'spring',
        TemplateContent: { Subject: 'Hello {{name}}, from {{shop}}', Text: 'Hi {{name}}' },
      }),
    );
    expect((await ses.send(new GetEmailTemplateCommand({ TemplateName: 'spring' }))).TemplateContent).toEqual({
      Subject: 'Hello {{name}}, from {{shop}}',
      Text: 'Hi {{name}}',
    });
    const out = await ses.send(
      new SendBulkEmailCommand({
        FromEmailAddress: 'news@sluice.test',
        DefaultEmailTags: [{ Name: 'campaign', Value: 'spring' }],
        DefaultContent: { Template: { TemplateName: 'spring', TemplateData: JSON.stringify({ shop: 'Acme' }) } },
        BulkEmailEntries: [
          entry('ann@example.com', 's-1', 'Ann'),
          entry('gone@example.com', 's-2', 'Gone'),
          entry('bob@busy.test', 's-3', 'Bob'),
          entry('cy@busy.test', 's-4', 'Cy'),
        ],
      }),
    );
    const results = out.BulkEmailEntryResults!;
    expect(results.map((r) => r.Status)).toEqual(['SUCCESS', 'MESSAGE_REJECTED', 'SUCCESS', 'ACCOUNT_THROTTLED']);
    expect(results[0]!.MessageId).toMatch(/^0100[0-9a-f]{12}-[0-9a-f-]{36}-000000$/);
    expect(results[1]!.Error).toBe('Email address rejected: gone@example.com (hard bounce)');
    expect(results[1]!.MessageId).toBeUndefined();
    const accepted = sandbox.accepted();
    expect(accepted.map((m) => [m.sluiceId, m.subject, m.providerMessageId])).toEqual([
      ['s-1', 'Hello Ann, from Acme', results[0]!.MessageId],
      ['s-3', 'Hello Bob, from Acme', results[2]!.MessageId],
    ]);
    expect(accepted[0]!.tags).toEqual({ campaign: 'spring', sluice_id: 's-1' });
    expect(sandbox.stats().byDomain).toMatchObject({
      'example.com': { accepted: 1, rejected: 1 },
      'busy.test': { accepted: 1, throttled: 1 },
    });
  });

  it('takes inline template content, says TEMPLATE_NOT_FOUND per entry, and refuses more than 50 entries', async () => {
    const sandbox = await startSandbox();
    const ses = sesClient(sandbox.url);
    const inline = await ses.send(
      new SendBulkEmailCommand({
        FromEmailAddress: 'news@sluice.test',
        DefaultContent: { Template: { TemplateContent: { Subject: 'Hi {{name}}', Text: '.' } } },
        BulkEmailEntries: [entry('ann@example.org', 's-1', 'Ann')],
      }),
    );
    expect(inline.BulkEmailEntryResults!.map((r) => r.Status)).toEqual(['SUCCESS']);
    expect(sandbox.accepted()[0]!.subject).toBe('Hi Ann');

    const missing = await ses.send(
      new SendBulkEmailCommand({
        FromEmailAddress: 'news@sluice.test',
        DefaultContent: { Template: { TemplateName: 'nope' } },
        BulkEmailEntries: [entry('ann@example.org', 's-2', 'Ann'), entry('bob@example.org', 's-3', 'Bob')],
      }),
    );
    expect(missing.BulkEmailEntryResults!.map((r) => r.Status)).toEqual(['TEMPLATE_NOT_FOUND', 'TEMPLATE_NOT_FOUND']);

    const { errors } = await settle([
      ses.send(
        new SendBulkEmailCommand({
          FromEmailAddress: 'news@sluice.test',
          DefaultContent: { Template: { TemplateName: 'nope' } },
          BulkEmailEntries: Array.from({ length: 51 }, (_, i) => entry(`r${i}@example.org`, `s${i}`, 'R')),
        }),
      ),
      ses.send(new CreateEmailTemplateCommand({ TemplateName: 'bad name!', TemplateContent: { Subject: 'x' } })),
      ses.send(new GetEmailTemplateCommand({ TemplateName: 'absent' })),
    ]);
    expect(errors.map((e) => [e.name, e.$metadata?.httpStatusCode])).toEqual([
      ['BadRequestException', 400],
      ['BadRequestException', 400],
      ['NotFoundException', 404],
    ]);
    expect(errors[0]!.message).toMatch(/BulkEmailEntries: at most 50 entries/);
    expect(sandbox.accepted()).toHaveLength(1);
  });

  it('refuses a second template of the same name, and forgets a deleted one', async () => {
    const sandbox = await startSandbox();
    const ses = sesClient(sandbox.url);
    const create = new CreateEmailTemplateCommand({ TemplateName: 't', TemplateContent: { Subject: 's' } });
    await ses.send(create);
    const { errors } = await settle([ses.send(create)]);
    expect(errors.map((e) => e.name)).toEqual(['AlreadyExistsException']);
    await ses.send(new DeleteEmailTemplateCommand({ TemplateName: 't' }));
    const after = await settle([ses.send(new GetEmailTemplateCommand({ TemplateName: 't' }))]);
    expect(after.errors.map((e) => e.name)).toEqual(['NotFoundException']);
  });
});
