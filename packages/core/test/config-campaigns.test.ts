import { describe, expect, it } from 'vitest';
import { parseConfig } from '@sluice/core';

describe('config campaigns', () => {
  it('archives 7 days after a campaign finished and keeps the record 90 days by default', () => {
    expect(parseConfig({}).campaigns).toEqual({
      archiveAfterMs: 7 * 86_400_000,
      archivedRetentionMs: 90 * 86_400_000,
      archiveCheckMs: 60_000,
    });
    expect(parseConfig({ campaigns: { archiveAfterMs: 3_600_000 } }).campaigns.archiveAfterMs).toBe(3_600_000);
  });

  it('fails fast naming the bad field', () => {
    expect(() => parseConfig({ campaigns: { archiveAfterMs: -1 } })).toThrow(/campaigns\.archiveAfterMs/);
    expect(() => parseConfig({ campaigns: { archivedRetentionMs: '90d' } })).toThrow(/campaigns\.archivedRetentionMs/);
    expect(() => parseConfig({ campaigns: { archiveAfter: 1 } })).toThrow(/campaigns/);
  });
});
