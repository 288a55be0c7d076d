/**
 * Which offers of a skill's server a listing shows: those on the listing's own terms (payee,
 * network, token, exactly the price) and well formed for their scheme, as the server gives them and
 * in its order (so a proof signed from the listing pays it); with none, the listing's `exact` terms.
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
  it('takes the server’s offers as it gives them, in its order, when on the listing’s terms: its payment window and its channel offer', () => {
    const asked = [channel, { ...exact, maxTimeoutSeconds: 300, payTo: exact.payTo.toLowerCase() }];
    expect(listedAccepts(exact, asked)).toEqual(asked);
    // A channel-only server is listed as one.
    expect(listedAccepts(exact, [channel])).toEqual([channel]);
  });

  it('takes a usage-based offer (upto, its maximum the price) that names the facilitator settling it', () => {
    const upto = {
      ...exact,
      scheme: 'upto',
      extra: { ...exact.extra, assetTransferMethod: 'permit2', facilitatorAddress: '0x00000000000000000000000000000000000000bb' },
    };
    expect(listedAccepts(exact, [exact, upto])).toEqual([exact, upto]);
    expect(listedAccepts(exact, [exact, { ...upto, amount: '999' }])).toEqual([exact]);
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

  it('leaves out an offer on other terms, of another scheme, or with a malformed extra', () => {
    const offers = (extra: Record<string, unknown>, more: Record<string, unknown> = {}) => [exact, { ...channel, ...more, extra }];
    expect(listedAccepts(exact, offers(channel.extra, { amount: '999' }))).toEqual([exact]);
    expect(listedAccepts(exact, offers({ ...channel.extra, withdrawDelay: 60 }))).toEqual([exact]);
    expect(listedAccepts(exact, offers({ ...channel.extra, receiverAuthorizer: 'someone' }))).toEqual([exact]);
    expect(listedAccepts(exact, offers({ ...channel.extra, minDeposit: '-1' }))).toEqual([exact]);
    expect(listedAccepts(exact, offers({ ...channel.extra, nested: { deep: true } }))).toEqual([exact]);
    expect(listedAccepts(exact, [{ ...exact, scheme: 'upto' }])).toEqual([exact]);
    expect(listedAccepts(exact, [{ ...exact, scheme: 'upto', extra: { ...exact.extra, facilitatorAddress: 'someone' } }])).toEqual([exact]);
    expect(listedAccepts(exact, [{ ...exact, scheme: 'auth-capture' }])).toEqual([exact]);
    expect(listedAccepts(exact, [{ ...exact, extra: { name: 'x'.repeat(300) } }])).toEqual([exact]);
    const withMore = { ...channel.extra, minDeposit: '5000', note: 'kept as the server sent it' };
    expect(listedAccepts(exact, offers(withMore))[1]).toEqual({ ...channel, extra: withMore });
  });
});
