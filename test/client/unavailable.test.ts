/**
 * A skill server (serve() of the creator SDK) whose payment facilitator is unreachable answers a
 * paid request 503 "Payment facilitator unavailable; nothing was charged" with Retry-After. Our
 * client waits as asked and sends the same proof again, within bounds: one signature, at most one
 * transfer, the budget released when the call finally fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Address } from 'viem';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { SkillCallError, type FetchLike } from 'skill-market';
import { freePort } from '../support/process';
import { type TcpProxy, startTcpProxy } from '../support/tcp-proxy';
import { countingAccount, NETWORK, useWorld } from './support/world';

const world = useWorld({ chain: true });
const PRICE = 10_000n;
let server: SkillServer;
let serverUrl: string;
let facilitator: TcpProxy;
let payee: Address;
let slug: string;
let runs = 0;

beforeAll(async () => {
  facilitator = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(world.facilitatorUrl).port) });
  payee = await world.payee();
  const port = await freePort();
  serverUrl = `http://127.0.0.1:${port}`;
  server = await serve(
    {
      shout: skill({ price: '$0.01', description: 'Upper-cases text' }, ({ text }: { text: string }) => {
        runs++;
        return { shout: text.toUpperCase() };
      }),
    },
    {
      port,
      hostname: '127.0.0.1',
      wallet: payee,
      facilitatorUrl: facilitator.url,
      network: NETWORK,
      asset: world.asset,
      apiKey: world.creator.key,
      apiUrl: world.registryUrl,
      register: { endpoint: serverUrl, groups: [world.group], onError: 'throw' },
      logger: { info() {}, warn() {}, error() {} },
      env: {},
    },
  );
  slug = server.registration[0]!.slug!;
});

afterAll(async () => {
  await server?.stop();
  await facilitator?.close();
});

/** A fetch that records the skill server's answers, and runs `on503` when one is 503. */
function watching(on503: () => void) {
  const seen: { status: number; proof: string | null }[] = [];
  const fetchImpl: FetchLike = async (input, init) => {
    const res = await fetch(input, init);
    if (String(input).startsWith(serverUrl)) {
      seen.push({ status: res.status, proof: new Headers(init?.headers).get('payment-signature') });
      if (res.status === 503) on503();
    }
    return res;
  };
  return { seen, fetch: fetchImpl };
}

describe('a 503 with Retry-After before anything was charged', () => {
  it('is retried after the wait it asks for with the same proof: the result comes back, charged once', async () => {
    const payer = countingAccount(await world.payer());
    const before = await world.chain.balanceOf(payer.address);
    const runsBefore = runs;
    const watch = watching(() => facilitator.restore());
    facilitator.cut();
    const market = world.market({ wallet: payer, fetch: watch.fetch, budget: '$1' });

    const { result, receipt } = await market.callWithReceipt(slug, { text: 'hi' });

    expect(result).toEqual({ shout: 'HI' });
    expect(receipt!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(watch.seen.map((s) => s.status)).toEqual([402, 503, 200]);
    expect(watch.seen[1]!.proof).not.toBeNull();
    expect(watch.seen[2]!.proof).toBe(watch.seen[1]!.proof);
    expect(payer.signatures).toBe(1);
    expect(runs - runsBefore).toBe(1);
    expect(await world.chain.balanceOf(payer.address)).toBe(before - PRICE);
    expect(market.spending).toMatchObject({ spent: PRICE, reserved: 0n });
  });

  it('is retried at most unavailableRetries times, never past unavailableMaxWaitMs; then it fails uncharged and frees the budget', async () => {
    const payer = countingAccount(await world.payer());
    const before = await world.chain.balanceOf(payer.address);
    facilitator.cut();
    try {
      // The server asks for 2 s: a 1 s allowance means no retry at all.
      const impatient = watching(() => {});
      const short = world.market({ wallet: payer, fetch: impatient.fetch, budget: '$1', unavailableMaxWaitMs: 1_000 });
      const first = await short.call(slug, { text: 'a' }).catch((e: unknown) => e);
      expect(first).toBeInstanceOf(SkillCallError);
      expect(first).toMatchObject({ status: 503, charged: 'no' });
      expect(impatient.seen.map((s) => s.status)).toEqual([402, 503]);
      expect(short.spending).toMatchObject({ spent: 0n, reserved: 0n });

      const patient = watching(() => {});
      const once = world.market({ wallet: payer, fetch: patient.fetch, budget: '$1', unavailableRetries: 1 });
      expect(await once.call(slug, { text: 'b' }).catch((e: unknown) => e)).toMatchObject({ status: 503, charged: 'no' });
      expect(patient.seen.map((s) => s.status)).toEqual([402, 503, 503]);
      expect(new Set(patient.seen.slice(1).map((s) => s.proof)).size).toBe(1);
      expect(once.spending).toMatchObject({ spent: 0n, reserved: 0n });
    } finally {
      facilitator.restore();
    }
    expect(payer.signatures).toBe(2);
    expect(await world.chain.balanceOf(payer.address)).toBe(before);
  });
});
