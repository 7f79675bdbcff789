import { describe, expect, it } from 'vitest';
import { compileContent, parseContent, parseRecipient } from '../src/index.js';

describe('campaign content', () => {
  it('renders each recipient from its data: html escaped, subject and text not', () => {
    const content = parseContent({
      from: 'Acme <news@acme.test>',
      subject: 'Hi {{first}} & co',
      html: '<p>{{first}} {{{banner}}}</p>',
      text: 'Dear {{first}}',
      tags: { kind: 'news' },
    });
    const out = compileContent(content).render({ first: 'A<b>', banner: '<i>sale</i>' });
    expect(out).toMatchObject({
      from: { address: 'news@acme.test', name: 'Acme' },
      subject: 'Hi A<b> & co',
      html: '<p>A&lt;b&gt; <i>sale</i></p>',
      text: 'Dear A<b>',
      tags: { kind: 'news' },
    });
  });

  it('fails a recipient whose data lacks a variable, naming the field and the variable', () => {
    const c = compileContent(parseContent({ from: 'a@acme.test', subject: 'Hi', html: '<p>{{user.first}}</p>' }));
    expect(() => c.render({})).toThrow(expect.objectContaining({ code: 'render_failed', path: 'content.html' }));
    expect(() => c.render({})).toThrow(/content\.html: "first" not defined/);
  });

  it('an ESP template takes each recipient data as its variables', () => {
    const c = compileContent(parseContent({ from: 'a@acme.test', template: { name: 'spring' } }));
    expect(c.render({ first: 'A' })).toMatchObject({ template: { name: 'spring', data: { first: 'A' } } });
  });

  it('refuses bad content at create, naming the field', () => {
    expect(() => parseContent({ from: 'a@acme.test', subject: 'Hi {{#if x}}', text: 'x' })).toThrow(
      expect.objectContaining({ code: 'invalid_argument', path: 'content.subject' }),
    );
    expect(() => parseContent({ from: 'a@acme.test', subject: 'Hi' })).toThrow(
      expect.objectContaining({ path: 'content.text' }),
    );
    expect(() => parseContent({ from: 'a@acme.test', subject: 'Hi', text: 'x', template: { name: 't' } })).toThrow(
      expect.objectContaining({ path: 'content.template' }),
    );
    expect(() => parseContent({ from: 'nope', subject: 'Hi', text: 'x' })).toThrow(
      expect.objectContaining({ path: 'content.from' }),
    );
    expect(() => parseContent({ from: 'a@acme.test', text: 'x' })).toThrow(
      expect.objectContaining({ path: 'content.subject' }),
    );
  });
});

describe('recipients', () => {
  it('takes an address, merge data, a key and a cursor value', () => {
    expect(parseRecipient({ to: 'a@x.test', data: { first: 'A' }, key: 'row-1', cursor: 17 }, 3)).toEqual({
      to: 'a@x.test',
      data: { first: 'A' },
      key: 'row-1',
      cursor: 17,
    });
  });

  it('names the bad field by position', () => {
    expect(() => parseRecipient({ to: 'nope' }, 41)).toThrow(
      expect.objectContaining({ code: 'invalid_recipient', path: 'recipients.41.to' }),
    );
    expect(() => parseRecipient({ to: 'a@x.test', data: { big: 'x'.repeat(20_000) } }, 2)).toThrow(
      expect.objectContaining({ path: 'recipients.2.data' }),
    );
    expect(() => parseRecipient({ to: 'a@x.test', subject: 'x' }, 0)).toThrow(
      expect.objectContaining({ code: 'invalid_recipient' }),
    );
    expect(() => parseRecipient(JSON.parse('{"to":"a@x.test","__proto__":{}}'), 5)).toThrow(
      expect.objectContaining({ path: 'recipients.5.__proto__' }),
    );
    expect(() => parseRecipient({ to: 'a@x.test', key: 'has space' }, 1)).toThrow(
      expect.objectContaining({ path: 'recipients.1.key' }),
    );
  });
});
