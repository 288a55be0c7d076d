/** What a payer's pipeline remembers of a free trial its server said is used up, and until when. */
import { describe, expect, it } from 'bun:test';
import { UsedTrials } from 'skill-market/client';

const endpoint = 'https://skills.example.com/haiku';
const wallet = '0xAbCdEf0000000000000000000000000000000001';

describe('used-up free trials', () => {
  it('knows none until the server refuses a sign-in', () => {
    expect(new UsedTrials().until(endpoint, wallet)).toBeUndefined();
  });

  it('keeps one until X-Trial-Resets-At, for the wallet in any case and for that skill only', () => {
    let now = Date.parse('2026-11-29T10:00:00Z');
    const used = new UsedTrials(() => now);
    used.add(endpoint, wallet, new Headers({ 'X-Trial-Resets-At': '2026-11-30T00:00:00.000Z' }));
    expect(used.until(endpoint, wallet.toLowerCase())).toBe(Date.parse('2026-11-30T00:00:00Z'));
    expect(used.until(`${endpoint}2`, wallet)).toBeUndefined();
    now = Date.parse('2026-11-30T00:00:00Z');
    expect(used.until(endpoint, wallet)).toBeUndefined();
  });

  it('keeps one for as long as it lives when the server does not say until when', () => {
    const used = new UsedTrials();
    used.add(endpoint, wallet, new Headers({ 'X-Trial-Resets-At': 'tomorrow' }));
    expect(used.until(endpoint, wallet)).toBe(Number.POSITIVE_INFINITY);
  });
});
