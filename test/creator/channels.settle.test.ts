/**
 * When the skill server's claimer settles: claims by amount or age as they come due, and one
 * settle for everything claimed `settleWithinMs` after the first claim it has not swept (not one per
 * claim round); at once when a round is forced or `settleWithinMs` is 0; once after a start, where
 * the facilitator's "nothing to settle" ends it; a settle the facilitator refuses waits a minute.
 * The facilitator here is a recording stand-in: what goes on chain is tested on anvil elsewhere.
 */
import { afterEach, describe, expect, it } from 'bun:test';
import type { Hex } from 'viem';
import { memoryChannelStore, type ChannelState, type ChannelStore } from 'skill-market/creator';
import { createClaimer, type Claimer } from '../../sdk/creator/schemes/channel/claims';
import type { ChannelRequirements } from '../../sdk/creator/schemes/channel/settings';
import { channelSettings } from '../../sdk/creator/schemes/channel/settings';
import type { FacilitatorClient } from '../../sdk/creator/facilitator-client';
import type { CreatorLogger } from '../../sdk/creator/logger';

const PAY_TO = '0x00000000000000000000000000000000000000a1';
const TOKEN = '0x00000000000000000000000000000000000000b2';
const requirements: ChannelRequirements = {
  scheme: 'batch-settlement',
  network: 'eip155:31337',
  amount: '1000',
  asset: TOKEN,
  payTo: PAY_TO,
  maxTimeoutSeconds: 60,
  extra: { receiverAuthorizer: '0x00000000000000000000000000000000000000c3', withdrawDelay: 900, name: 'USD Coin', version: '2' },
};
const quiet: CreatorLogger = { info() {}, warn() {}, error() {} };

const stateOf = (n: number, charged: bigint, claimed = 0n): ChannelState => ({
  channelId: `0x${n.toString(16).padStart(64, '0')}` as Hex,
  config: {
    payer: PAY_TO,
    payerAuthorizer: PAY_TO,
    receiver: PAY_TO,
    receiverAuthorizer: requirements.extra.receiverAuthorizer,
    token: TOKEN,
    withdrawDelay: 900,
    salt: `0x${'00'.repeat(32)}`,
  },
  chargedCumulativeAmount: charged.toString(),
  signedMaxClaimable: charged.toString(),
  signature: `0x${'11'.repeat(65)}`,
  balance: '1000000',
  totalClaimed: claimed.toString(),
  withdrawRequestedAt: 0,
  refundNonce: '0',
  onchainSyncedAt: 0,
  lastRequestTimestamp: 0,
  unclaimedSince: charged > claimed ? 1 : 0,
});

/** A claimer on a memory store and a fake clock; `facilitator.sent` lists the payload types it was sent. */
async function setUp(channels: Record<string, unknown>, states: ChannelState[] = []) {
  const store: ChannelStore = memoryChannelStore();
  for (const s of states) await store.update(s.channelId, async () => ({ next: s, value: undefined }));
  let time = 1_000_000;
  const sent: string[] = [];
  let refuseSettle: string | undefined;
  const facilitator = {
    async forward(_path: string, body: { payload: { type: string } }) {
      const type = body.payload.type;
      sent.push(type);
      if (type === 'settle' && refuseSettle) return { success: false, errorReason: refuseSettle };
      return { success: true, transaction: `0x${type}${sent.length}` };
    },
  } as unknown as FacilitatorClient;
  // Claims above $0.001; no timer rounds (the test runs each round).
  const settings = channelSettings({ claimAbove: '$0.001', claimIntervalMs: 3_600_000, ...channels }, 6)!;
  const claimer = createClaimer({
    store,
    facilitator,
    settings,
    chainId: 31337,
    requirements: () => requirements,
    logger: quiet,
    now: () => time,
  });
  return {
    claimer,
    store,
    sent,
    advance: (ms: number) => {
      time += ms;
    },
    refuseSettles: (reason: string | undefined) => {
      refuseSettle = reason;
    },
    charge: (n: number, charged: bigint) =>
      store.update(stateOf(n, 0n).channelId, async (s) => ({
        next: { ...(s ?? stateOf(n, 0n)), chargedCumulativeAmount: charged.toString(), signedMaxClaimable: charged.toString() },
        value: undefined,
      })),
  };
}

let claimers: Claimer[] = [];
afterEach(() => {
  for (const c of claimers) c.stop();
  claimers = [];
});

describe('channel claims and settles', () => {
  it('claims each round that is due and settles once, settleWithinMs after the first claim', async () => {
    const t = await setUp({}, [stateOf(1, 5000n)]);
    claimers.push(t.claimer);
    expect(await t.claimer.run()).toEqual({ channels: 1, claim: '0xclaim1' });
    t.advance(300_000);
    await t.charge(2, 4000n);
    expect(await t.claimer.run()).toEqual({ channels: 1, claim: '0xclaim2' });
    t.advance(299_000);
    expect(await t.claimer.run()).toEqual({ channels: 0 });
    t.advance(1_000);
    expect(await t.claimer.run()).toEqual({ channels: 0, settle: '0xsettle3' });
    t.advance(3_600_000);
    expect(await t.claimer.run()).toEqual({ channels: 0 });
    expect(t.sent).toEqual(['claim', 'claim', 'settle']);
  });

  it('settles at once in a forced round and after every claim with settleWithinMs 0', async () => {
    const forced = await setUp({}, [stateOf(1, 5000n)]);
    claimers.push(forced.claimer);
    expect(await forced.claimer.run(true)).toEqual({ channels: 1, claim: '0xclaim1', settle: '0xsettle2' });

    const every = await setUp({ settleWithinMs: 0 }, [stateOf(1, 5000n)]);
    claimers.push(every.claimer);
    expect(await every.claimer.run()).toEqual({ channels: 1, claim: '0xclaim1', settle: '0xsettle2' });
    await every.charge(1, 9000n);
    expect(await every.claimer.run()).toEqual({ channels: 1, claim: '0xclaim3', settle: '0xsettle4' });
  });

  it('settles once after a start when something was claimed before, and ends on "nothing to settle"', async () => {
    const t = await setUp({}, [stateOf(1, 5000n, 5000n)]);
    claimers.push(t.claimer);
    t.refuseSettles('invalid_batch_settlement_evm_nothing_to_settle');
    expect(await t.claimer.run()).toEqual({ channels: 0 });
    expect(await t.claimer.run()).toEqual({ channels: 0 });
    expect(t.sent).toEqual(['settle']);

    const fresh = await setUp({}, [stateOf(1, 0n)]);
    claimers.push(fresh.claimer);
    expect(await fresh.claimer.run()).toEqual({ channels: 0 });
    expect(fresh.sent).toEqual([]);
  });

  it('tries a refused settle again after a minute, not on every round', async () => {
    const t = await setUp({ settleWithinMs: 1000 }, [stateOf(1, 5000n)]);
    claimers.push(t.claimer);
    await t.claimer.run();
    t.advance(1_000);
    t.refuseSettles('invalid_batch_settlement_evm_settle_simulation_failed');
    await expect(t.claimer.run()).rejects.toThrow('settle: invalid_batch_settlement_evm_settle_simulation_failed');
    t.refuseSettles(undefined);
    t.advance(59_000);
    expect(await t.claimer.run()).toEqual({ channels: 0 });
    t.advance(1_000);
    expect(await t.claimer.run()).toEqual({ channels: 0, settle: '0xsettle3' });
    expect(t.sent).toEqual(['claim', 'settle', 'settle']);
  });
});
