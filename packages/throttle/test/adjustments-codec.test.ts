import { describe, expect, it } from 'vitest';
import {
  adjustmentEntries,
  adjustmentField,
  adjustmentNames,
  decodeAdjustment,
  encodeAdjustment,
  overrideField,
  readAdjustment,
} from '@sluice/throttle';

// The adjustments hash outlives deployments: these are the stored forms, byte for byte.
describe('the adjustments codec', () => {
  it('names each family’s fields by its prefix', () => {
    expect([
      adjustmentField('slow', 'k'),
      adjustmentField('governed', 'k'),
      adjustmentField('circuit', 'c'),
      adjustmentField('circuitClosed', 'c'),
      adjustmentField('campaignPause', 'id'),
      adjustmentField('warmup', 'p'),
      adjustmentField('override', 'k'),
      adjustmentField('cap', 'ses'),
      adjustmentField('pause', 'ses'),
      adjustmentField('down', 'ses'),
    ]).toEqual([
      'slow:k',
      'gov:k',
      'circuit:c',
      'circuitclosed:c',
      'govpause:id',
      'warm:p',
      'ovr:k',
      'cap:ses',
      'pause:ses',
      'down:ses',
    ]);
    expect(overrideField('k')).toBe('ovr:k');
  });

  it('writes every family as before', () => {
    const governed = {
      factor: 0.4,
      decidedAt: 2,
      rule: 'recovery',
      from: 0.25,
      cutAt: 1,
      cutFactor: 0.25,
      cutRule: 'blocks',
      cutFrom: 1,
    };
    expect(encodeAdjustment('governed', governed)).toBe('0.4000,2,recovery,0.2500,1,0.2500,blocks,1.0000');
    expect(encodeAdjustment('slow', { factor: 0.5, untilMs: 2, lastCut: 1 })).toBe('0.5,2,1');
    expect(encodeAdjustment('circuit', { untilMs: 9, openForMs: 30_000, probes: 3, rule: 'blocks' })).toBe(
      '9,30000,3,blocks',
    );
    expect(encodeAdjustment('circuitClosed', 7)).toBe('7');
    expect(encodeAdjustment('campaignPause', { untilMs: 5, rule: 'complaints' })).toBe('5,complaints');
    expect(encodeAdjustment('warmup', { step: 2, dayStart: 3, state: 'active' })).toBe('2,3,active');
    expect(encodeAdjustment('cap', 14.5)).toBe('14.5');
    expect(encodeAdjustment('pause', { untilMs: 4, reason: 'daily quota' })).toBe('4,daily quota');
    expect(encodeAdjustment('down', { untilMs: 4, reason: 'x'.repeat(300) })).toBe(`4,${'x'.repeat(200)}`);
    const o = {
      scope: 'provider',
      name: 'ses',
      kind: 'rate',
      rate: 5,
      untilMs: 9,
      actor: 'a',
      reason: 'r',
      setAt: 1,
    } as const;
    expect(encodeAdjustment('override', o)).toBe(JSON.stringify(o));
  });

  it('reads what is stored, older and script-written forms included', () => {
    // As slow-down-1.lua writes it.
    expect(decodeAdjustment('slow', '0.125000,1700000001000,1700000000000')).toEqual({
      factor: 0.125,
      untilMs: 1_700_000_001_000,
      lastCut: 1_700_000_000_000,
    });
    // A governed value from before the cut was kept: its decision was its cut.
    expect(decodeAdjustment('governed', '0.5000,123,blocks')).toEqual({
      factor: 0.5,
      decidedAt: 123,
      rule: 'blocks',
      from: 1,
      cutAt: 123,
      cutFactor: 0.5,
      cutRule: 'blocks',
      cutFrom: 1,
    });
    expect(decodeAdjustment('governed', '0.5000,123,blocks,0.8000')).toMatchObject({ from: 0.8, cutFrom: 0.8 });
    expect(decodeAdjustment('circuit', '9,30000,3')).toEqual({ untilMs: 9, openForMs: 30_000, probes: 3, rule: '' });
    // A rule or reason is the rest of the value, commas and all.
    expect(decodeAdjustment('campaignPause', '5,a,b')).toEqual({ untilMs: 5, rule: 'a,b' });
    expect(decodeAdjustment('pause', '5')).toEqual({ untilMs: 5, reason: '' });
    expect(decodeAdjustment('down', '5,no answer, 3 times')).toEqual({ untilMs: 5, reason: 'no answer, 3 times' });
    expect(decodeAdjustment('warmup', '1,2,warming')).toEqual({ step: 1, dayStart: 2, state: 'warming' });
    expect(decodeAdjustment('warmup', '1,2,odd')).toMatchObject({ state: 'warming' });
    expect(decodeAdjustment('cap', '14.5')).toBe(14.5);
    expect(decodeAdjustment('circuitClosed', '7')).toBe(7);
    // An override nobody can read holds nothing.
    expect(decodeAdjustment('override', '{not json')).toBeUndefined();
    expect(decodeAdjustment('override', JSON.stringify({ untilMs: 9 }))).toBeUndefined();
  });

  it('tells families with similar prefixes apart', () => {
    const fields = {
      'gov:a': '0.5000,1,r',
      'govpause:b': '5,r',
      'pause:c': '5,q',
      'circuit:d': '9,1,1,r',
      'circuitclosed:e': '7',
      'ovr:f': '{not json',
      'ovr:g': JSON.stringify({ kind: 'pause', untilMs: 9 }),
    };
    expect(adjustmentNames(fields, 'governed')).toEqual(['a']);
    expect(adjustmentNames(fields, 'campaignPause')).toEqual(['b']);
    expect(adjustmentNames(fields, 'pause')).toEqual(['c']);
    expect(adjustmentNames(fields, 'circuit')).toEqual(['d']);
    expect(adjustmentNames(fields, 'circuitClosed')).toEqual(['e']);
    expect(adjustmentNames(fields, 'override')).toEqual(['f', 'g']);
    expect(adjustmentEntries(fields, 'override')).toEqual([['g', { kind: 'pause', untilMs: 9 }]]);
    expect(readAdjustment(fields, 'campaignPause', 'b')).toEqual({ untilMs: 5, rule: 'r' });
    expect(readAdjustment(fields, 'campaignPause', 'a')).toBeUndefined();
  });
});
