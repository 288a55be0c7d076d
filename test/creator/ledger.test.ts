/** The single-use and replay memory on its own: states, expiry and its memory bounds. */
import { describe, expect, it } from 'bun:test';
import { createProofLedger } from '../../sdk/creator/ledger';

const answer = (body = 'ok') => ({ status: 200, headers: {}, body });

function clocked(options: Parameters<typeof createProofLedger>[0] = {}) {
  let now = 1_000_000_000_000;
  const ledger = createProofLedger({ ...options, now: () => now });
  return { ledger, advance: (ms: number) => void (now += ms), seconds: () => BigInt(Math.floor(now / 1000)) };
}

describe('proof ledger', () => {
  it('claims once: busy while running, replay for the same call, used for another, free again after release', () => {
    const { ledger, seconds } = clocked();
    const validBefore = seconds() + 60n;
    expect(ledger.claim('k', 'call-a', validBefore)).toEqual({ type: 'claimed' });
    expect(ledger.claim('k', 'call-a', validBefore)).toEqual({ type: 'busy' });
    ledger.complete('k', answer('first'));
    expect(ledger.claim('k', 'call-a', validBefore)).toEqual({ type: 'replay', response: answer('first') });
    expect(ledger.claim('k', 'call-b', validBefore)).toEqual({ type: 'used' });
    expect(ledger.claim('j', 'call-c', validBefore)).toEqual({ type: 'claimed' });
    ledger.release('j');
    expect(ledger.claim('j', 'call-c', validBefore)).toEqual({ type: 'claimed' });
  });

  it('forgets a finished proof a grace period after its validBefore, never while it runs', () => {
    const { ledger, advance, seconds } = clocked({ graceMs: 1000 });
    ledger.claim('done', 'x', seconds() + 10n);
    ledger.complete('done', answer());
    ledger.claim('running', 'y', seconds() + 10n);
    advance(10_999);
    expect(ledger.claim('done', 'x', seconds() + 10n).type).toBe('replay');
    advance(2);
    expect(ledger.claim('done', 'z', seconds() + 10n).type).toBe('claimed');
    expect(ledger.claim('running', 'y', seconds() + 10n).type).toBe('busy');
  });

  it('keeps at most maxEntries, dropping the oldest finished ones, and refuses when all are in flight', () => {
    const { ledger, seconds } = clocked({ maxEntries: 3 });
    for (const key of ['a', 'b', 'c']) {
      ledger.claim(key, key, seconds() + 60n);
      ledger.complete(key, answer());
    }
    expect(ledger.claim('d', 'd', seconds() + 60n).type).toBe('claimed');
    expect(ledger.size()).toBe(3);
    expect(ledger.claim('a', 'a', seconds() + 60n).type).toBe('claimed'); // 'a' was dropped first
    expect(ledger.claim('e', 'e', seconds() + 60n).type).toBe('claimed'); // drops 'b' ... only finished ones
    expect(ledger.claim('f', 'f', seconds() + 60n)).toEqual({ type: 'full' });
  });

  it('bounds the bytes of stored answers: old bodies go first, a huge one is never kept', () => {
    const { ledger, seconds } = clocked({ maxBytes: 100_000 });
    for (const key of ['a', 'b', 'c', 'd', 'e']) {
      ledger.claim(key, key, seconds() + 60n);
      ledger.complete(key, answer(key.repeat(10_000)));
    }
    expect(ledger.storedBytes()).toBeLessThanOrEqual(100_000);
    expect(ledger.claim('a', 'a', seconds() + 60n).type).toBe('used'); // body forgotten, proof still spent
    expect(ledger.claim('e', 'e', seconds() + 60n).type).toBe('replay');
    ledger.claim('huge', 'h', seconds() + 60n);
    ledger.complete('huge', answer('h'.repeat(30_000)));
    expect(ledger.claim('huge', 'h', seconds() + 60n).type).toBe('used');
  });

  it('keeps a proof with a far-future validBefore only up to the retention bound', () => {
    const { ledger, advance, seconds } = clocked({ maxRetentionMs: 5000 });
    ledger.claim('k', 'x', 2n ** 255n);
    ledger.complete('k', answer());
    advance(5001);
    expect(ledger.claim('k', 'y', seconds() + 60n).type).toBe('claimed');
  });
});
