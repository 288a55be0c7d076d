/** The single-use and replay memory on its own: states, expiry and its memory bounds. */
import { describe, expect, it } from 'bun:test';
import { createProofLedger } from '../../sdk/creator/schemes/exact/ledger';

const answer = (body = 'ok') => ({ status: 200, headers: {}, body });

function clocked(options: Parameters<typeof createProofLedger>[0] = {}) {
  let now = 1_000_000_000_000;
  const ledger = createProofLedger({ ...options, now: () => now });
  return {
    ledger,
    advance: (ms: number) => {
      now += ms;
    },
    seconds: () => BigInt(Math.floor(now / 1000)),
  };
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

  it('holds a result whose payment is unknown: pending for the same call, used for another, then the final answer', () => {
    const { ledger, seconds } = clocked();
    const validBefore = seconds() + 60n;
    ledger.claim('k', 'call-a', validBefore);
    ledger.hold('k', answer('result'));
    expect(ledger.claim('k', 'call-a', validBefore)).toEqual({ type: 'pending' });
    expect(ledger.claim('k', 'call-b', validBefore)).toEqual({ type: 'used' });
    expect(ledger.held('k')).toEqual(answer('result'));
    ledger.release('k'); // a held call is not released: it may be paid for
    expect(ledger.claim('k', 'call-a', validBefore)).toEqual({ type: 'pending' });
    ledger.complete('k', answer('result+receipt'));
    expect(ledger.held('k')).toBeUndefined();
    expect(ledger.claim('k', 'call-a', validBefore)).toEqual({ type: 'replay', response: answer('result+receipt') });
  });

  it('never expires, evicts or forgets a held result, and keeps its final answer a while after a late outcome', () => {
    const { ledger, advance, seconds } = clocked({
      maxEntries: 2,
      graceMs: 1000,
      maxRetentionMs: 5000,
      maxBytes: 40_000,
      resolvedRetentionMs: 60_000,
    });
    ledger.claim('held', 'h', seconds() + 1n);
    ledger.hold('held', answer('h'.repeat(5_000)));
    ledger.claim('done', 'd', seconds() + 1n);
    ledger.complete('done', answer('d'.repeat(5_000)));
    advance(3_600_000); // an hour: far past validBefore, grace and retention
    expect(ledger.claim('held', 'h', seconds() + 60n)).toEqual({ type: 'pending' });
    expect(ledger.claim('new', 'n', seconds() + 60n).type).toBe('claimed'); // 'done' made room, not 'held'
    expect(ledger.claim('other', 'o', seconds() + 60n)).toEqual({ type: 'full' });
    expect(ledger.held('held')?.body).toHaveLength(5_000);

    ledger.complete('held', answer('final'));
    advance(59_000);
    expect(ledger.claim('held', 'h', seconds() + 60n)).toEqual({ type: 'replay', response: answer('final') });
    advance(2_000);
    expect(ledger.claim('held', 'h', seconds() + 60n).type).toBe('claimed');
  });

  it('keeps the final answer of a held call even when it is too big to keep for an ordinary replay', () => {
    const { ledger, seconds } = clocked({ maxBytes: 100_000 });
    ledger.claim('big', 'b', seconds() + 60n);
    ledger.hold('big', answer('r'.repeat(30_000)));
    ledger.complete('big', answer('R'.repeat(30_000)));
    expect(ledger.claim('big', 'b', seconds() + 60n)).toEqual({ type: 'replay', response: answer('R'.repeat(30_000)) });
  });

  it("hands a call's final answer to the requests waiting for it: at completion, undefined on release or past the wait", async () => {
    const { ledger, seconds } = clocked();
    const validBefore = seconds() + 60n;
    ledger.claim('held', 'h', validBefore);
    ledger.hold('held', answer('result'));
    const waiting = [ledger.outcome('held', 60_000), ledger.outcome('held', 60_000)];
    ledger.complete('held', answer('result+receipt'));
    expect(await Promise.all(waiting)).toEqual([answer('result+receipt'), answer('result+receipt')]);
    expect(await ledger.outcome('held', 0)).toEqual(answer('result+receipt')); // finished: at once

    ledger.claim('running', 'r', validBefore);
    const released = ledger.outcome('running', 60_000);
    ledger.release('running');
    expect(await released).toBeUndefined();
    expect(ledger.claim('running', 'r', validBefore)).toEqual({ type: 'claimed' });

    expect(await ledger.outcome('running', 5)).toBeUndefined(); // nothing came within the wait
    expect(ledger.claim('running', 'r', validBefore)).toEqual({ type: 'busy' });
    expect(await ledger.outcome('never', 60_000)).toBeUndefined();
  });
});
