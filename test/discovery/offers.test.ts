/**
 * Which reported offers a listing shows: only those on the listing's own terms (payee, network,
 * token, exactly the price), the channel's `extra` rebuilt from its checked fields; anything else
 * leaves the listing's `exact` terms alone.
 */
import { describe, expect, it } from 'bun:test';
import { listedAccepts } from '../../src/registry/modules/discovery/offers';

const exact = {
  scheme: 'exact',
  network: 'eip155:8453',
  amount: '1000',
  asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  payTo: '0x000000000000000000000000000000000000dEaD',
  maxTimeoutSeconds: 60,
  extra: { name: 'USD Coin', version: '2' },
};
const channel = {
  ...exact,
  scheme: 'batch-settlement',
  maxTimeoutSeconds: 90,
  extra: { receiverAuthorizer: '0x00000000000000000000000000000000000000aa', withdrawDelay: 900, name: 'USD Coin', version: '2' },
};

describe('the accepts a listing shows', () => {
  it('takes the server’s payment window and its channel offer when both are on the listing’s terms', () => {
    const listed = listedAccepts(exact, [{ ...exact, maxTimeoutSeconds: 90, payTo: exact.payTo.toLowerCase() }, channel]);
    expect(listed).toEqual([
      { ...exact, maxTimeoutSeconds: 90 },
      { ...channel, extra: { ...channel.extra, receiverAuthorizer: '0x00000000000000000000000000000000000000AA' } },
    ]);
  });

  it('keeps the listing’s exact terms alone when the server asks another price, payee or token', () => {
    for (const change of [{ amount: '2000' }, { payTo: '0x000000000000000000000000000000000000bEEF' }, { network: 'eip155:84532' }]) {
      expect(
        listedAccepts(exact, [
          { ...exact, ...change },
          { ...channel, ...change },
        ]),
      ).toEqual([exact]);
    }
    expect(listedAccepts(exact, undefined)).toEqual([exact]);
  });

  it('leaves out a channel offer on other terms or with a malformed extra, and drops unknown extra fields', () => {
    const offers = (extra: Record<string, unknown>, more: Record<string, unknown> = {}) => [exact, { ...channel, ...more, extra }];
    expect(listedAccepts(exact, offers(channel.extra, { amount: '999' }))).toEqual([exact]);
    expect(listedAccepts(exact, offers({ ...channel.extra, withdrawDelay: 60 }))).toEqual([exact]);
    expect(listedAccepts(exact, offers({ ...channel.extra, receiverAuthorizer: 'someone' }))).toEqual([exact]);
    expect(listedAccepts(exact, offers({ ...channel.extra, minDeposit: '-1' }))).toEqual([exact]);
    const [, kept] = listedAccepts(exact, offers({ ...channel.extra, minDeposit: '5000', note: '<script>' }));
    expect(kept!.extra).toEqual({ ...channel.extra, receiverAuthorizer: '0x00000000000000000000000000000000000000AA', minDeposit: '5000' });
  });
});
