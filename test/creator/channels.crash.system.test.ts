/**
 * A `market serve` process selling over payment channels is killed with SIGKILL; started again on
 * the same channel folder it loses nothing it answered for:
 *
 * - killed in the middle of a load of channel calls, it claims every voucher it answered for (at
 *   most the calls in flight at the kill are claimed besides, their vouchers written an instant
 *   before the answer could leave);
 * - a resend of an answered call (its answer lost) gets the stored result, charged once;
 * - a payer whose top-up deposit reached the chain while the server died (after the deposit's
 *   settlement, before the state was written) is served at the first call after the restart;
 * - a journal with one damaged record starts with an error naming it, and every answered call is
 *   still claimed; a damaged snapshot stops the start with what to do, and `--repair-channels` starts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address } from 'viem';
import { fileChannelStore } from 'skill-market/creator';
import { decodeBase64Json, decodePaymentRequired } from 'skill-market/x402';
import { channelTotals, type LocalChain, receiverState, startChain, type TestAccount } from '../support/chain';
import { startBatchFacilitator } from '../support/chain/batch-facilitator';
import { referenceChannelClient, voucherProof } from '../support/channel-server';
import { eventually } from '../support/eventually';
import { freePort, type MarketProcess, startMarket, waitForJson } from '../support/process';

const PRICE = 1_000n;
const PAYERS = 4;
let chain: LocalChain;
let facilitator: ReturnType<typeof startBatchFacilitator>;
let folder: string;
const proxies: ReturnType<typeof Bun.serve>[] = [];

beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
  facilitator = startBatchFacilitator(chain, chain.accounts.relayer);
  folder = await mkdtemp(join(tmpdir(), 'serve-crash-'));
  // Each run answers with its own id: a stored answer sent again is told from a new run.
  await writeFile(
    join(folder, 'skills.ts'),
    "import { skill } from 'skill-market/creator';\nexport const echo = skill({ price: '$0.001' }, (input) => ({ echo: input, run: crypto.randomUUID() }));\n",
  );
}, 60_000);

afterAll(async () => {
  for (const proxy of proxies) proxy.stop(true);
  facilitator?.stop();
  await chain?.stop();
  await rm(folder, { recursive: true, force: true });
});

const referencePay = (account: TestAccount, depositMultiplier = 1000) => referenceChannelClient(chain, account, { depositMultiplier });
const jsonPost = (body: unknown, proof?: string): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(proof ? { 'PAYMENT-SIGNATURE': proof } : {}) },
  body: JSON.stringify(body),
});

/** A seller of `echo` over channels: its payee, receiver authorizer, port and channel folder, started with `start()`. */
async function seller(name: string, facilitatorUrl = facilitator.url) {
  const payee: Address = (await chain.createAccount()).address;
  const authorizer = await chain.createAccount();
  const port = await freePort();
  const channels = join(folder, name);
  const url = `http://127.0.0.1:${port}`;
  const started: MarketProcess[] = [];
  const start = async (flags: string[] = [], { claimWithin = '1800', settleWithin = '600', healthy = true } = {}) => {
    const run = startMarket(
      [
        'serve',
        'skills.ts',
        ...['--port', String(port), '--host', '127.0.0.1', '--facilitator', facilitatorUrl],
        ...['--network', chain.network, '--asset', chain.token.address, '--no-register', '--channels-dir', channels],
        ...['--claim-within', claimWithin, '--settle-within', settleWithin, ...flags],
      ],
      { MARKET_WALLET_ADDRESS: payee, MARKET_RECEIVER_AUTHORIZER_KEY: authorizer.privateKey },
      folder,
    );
    started.push(run);
    if (healthy) await waitForJson(`${url}/health`);
    return run;
  };
  const kill = async (run: MarketProcess) => {
    run.child.kill('SIGKILL');
    await run.exited;
  };
  const stopAll = async () => {
    for (const run of started) run.child.kill('SIGTERM');
    await Promise.all(started.map((run) => run.exited));
  };
  return { payee, port, channels, url, start, kill, stopAll };
}

/** The channel id a proof the reference client sent names. */
const channelOf = (proof: string) =>
  (decodeBase64Json(proof, 'malformed_payment', 'proof') as { payload: { voucher: { channelId: `0x${string}` } } }).payload.voucher
    .channelId;

describe('market serve killed mid-load', () => {
  it('loses no voucher it answered: after a restart its claim covers every answered call', async () => {
    const sold = await seller('load');
    const first = await sold.start();
    let answered = 0;
    let stop = false;
    const load = async (payer: TestAccount) => {
      const { pay } = referencePay(payer);
      for (let i = 0; !stop; i++) {
        const res = await pay(`${sold.url}/echo`, jsonPost({ i })).catch(() => undefined);
        if (res?.status !== 200) return;
        await res.arrayBuffer();
        answered++;
      }
    };
    const payers = await Promise.all(Array.from({ length: PAYERS }, () => chain.createAccount({ usdc: 10_000_000n })));
    const loads = payers.map((payer) => load(payer));
    await eventually(
      () => answered,
      (n) => n >= 60,
      'sixty answered calls',
      30_000,
    );
    await sold.kill(first);
    stop = true;
    await Promise.all(loads);
    expect(await receiverState(chain, sold.payee)).toMatchObject({ totalClaimed: 0n });

    try {
      await sold.start([], { claimWithin: '1', settleWithin: '1' });
      const claimed = await eventually(
        async () => (await receiverState(chain, sold.payee)).totalClaimed,
        (total) => total >= BigInt(answered) * PRICE,
        'a claim of every answered call',
        30_000,
      );
      expect(claimed).toBeLessThanOrEqual(BigInt(answered + PAYERS) * PRICE);
      await eventually(
        () => receiverState(chain, sold.payee),
        (r) => r.totalSettled === claimed,
        'the claimed total settled to the receiver',
        10_000,
      );
    } finally {
      await sold.stopAll();
    }
  }, 120_000);

  it('answers a resend of a call it answered before the kill with the stored result, charged once', async () => {
    const sold = await seller('resend');
    const first = await sold.start();
    const payer = await chain.createAccount({ usdc: 1_000_000n });
    const { pay, proofs } = referencePay(payer, 10);
    expect((await pay(`${sold.url}/echo`, jsonPost({ i: 1 }))).status).toBe(200);
    const answer = await pay(`${sold.url}/echo`, jsonPost({ i: 2 }));
    expect(answer.status).toBe(200);
    const stored = await answer.json();
    const proof = proofs.at(-1)!;
    await sold.kill(first);

    try {
      await sold.start();
      const again = await fetch(`${sold.url}/echo`, jsonPost({ i: 2 }, proof));
      expect(again.status).toBe(200);
      expect(again.headers.get('x-payment-replayed')).toBe('true');
      expect(await again.json()).toEqual(stored);
      // Charged once: the next voucher is the charge of two calls plus the price.
      const next = await fetch(`${sold.url}/echo`, jsonPost({ i: 3 }, await voucherProof(chain, proof, payer, 3n * PRICE)));
      expect(next.status).toBe(200);
      expect(((await next.json()) as { result: { run: string } }).result.run).not.toBe((stored as { result: { run: string } }).result.run);
    } finally {
      await sold.stopAll();
    }
  }, 60_000);

  it('serves a payer whose top-up reached the chain while the server was killed at the first call after the restart', async () => {
    // The facilitator's answer to the top-up is held once the deposit is on chain: the server dies
    // after the deposit's settlement and before it wrote the channel's new balance.
    let holdDeposits = false;
    let landed!: () => void;
    const topUpLanded = new Promise<void>((resolve) => {
      landed = resolve;
    });
    const proxy = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: async (request) => {
        const { pathname } = new URL(request.url);
        const body = request.method === 'POST' ? await request.text() : undefined;
        const answer = await fetch(`${facilitator.url}${pathname}`, { method: request.method, headers: request.headers, body });
        const text = await answer.text();
        const type = body ? (JSON.parse(body) as { paymentPayload?: { payload?: { type?: string } } }).paymentPayload?.payload?.type : '';
        if (holdDeposits && pathname === '/settle' && type === 'deposit') {
          landed();
          return new Promise<Response>(() => {});
        }
        return new Response(text, { status: answer.status, headers: { 'content-type': 'application/json' } });
      },
    });
    proxies.push(proxy);
    const sold = await seller('top-up', `http://127.0.0.1:${proxy.port}`);
    const first = await sold.start();
    const payer = await chain.createAccount({ usdc: 1_000_000n });
    const { pay, proofs } = referencePay(payer, 3);
    for (let i = 1; i <= 3; i++) expect((await pay(`${sold.url}/echo`, jsonPost({ i }))).status).toBe(200);
    holdDeposits = true;
    const fourth = pay(`${sold.url}/echo`, jsonPost({ i: 4 })).catch(() => undefined);
    await topUpLanded;
    await sold.kill(first);
    await fourth;
    const channelId = channelOf(proofs[0]!);
    expect(await channelTotals(chain, channelId)).toEqual({ balance: 6n * PRICE, totalClaimed: 0n });

    try {
      holdDeposits = false;
      await sold.start();
      // The state says 3 calls charged of a 3-call deposit; the chain holds the top-up.
      const res = await fetch(`${sold.url}/echo`, jsonPost({ i: 4 }, await voucherProof(chain, proofs[2]!, payer, 4n * PRICE)));
      const refusal = res.status === 402 ? decodePaymentRequired(res.headers.get('payment-required') ?? '').error : '';
      expect([res.status, refusal]).toEqual([200, '']);
    } finally {
      await sold.stopAll();
    }
  }, 60_000);
});

describe('market serve on a damaged channel folder', () => {
  it('starts on a journal with one damaged record, names it, and still claims every answered call', async () => {
    const sold = await seller('damaged-journal');
    const first = await sold.start();
    const payers = await Promise.all([1, 2].map(() => chain.createAccount({ usdc: 1_000_000n })));
    let answered = 0;
    for (const payer of payers) {
      const { pay } = referencePay(payer, 10);
      for (let i = 0; i < 6; i++) {
        expect((await pay(`${sold.url}/echo`, jsonPost({ i }))).status).toBe(200);
        answered++;
      }
    }
    await sold.kill(first);
    // One changed byte in the third record (of the first payer's channel): earlier versions read
    // nothing after it.
    const [journal] = (await readdir(sold.channels)).filter((name) => /^journal-\d+\.log$/.test(name));
    const path = join(sold.channels, journal!);
    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(lines.length).toBeGreaterThan(answered);
    lines[2] = lines[2]!.replace('"signature":"0x', '"signature":"0y');
    await writeFile(path, lines.join('\n'));

    try {
      const second = await sold.start([], { claimWithin: '1', settleWithin: '1' });
      await eventually(
        second.output,
        (text) => text.includes(`the channel journal ${path} has 1 damaged record(s): line 3 (checksum mismatch, channel 0x`),
        'an error naming the damaged record',
        10_000,
        { context: second.output },
      );
      const claimed = await eventually(
        async () => (await receiverState(chain, sold.payee)).totalClaimed,
        (total) => total >= BigInt(answered) * PRICE,
        'a claim of every answered call',
        30_000,
        { context: second.output },
      );
      expect(claimed).toBe(BigInt(answered) * PRICE);
    } finally {
      await sold.stopAll();
    }
  }, 60_000);

  it('does not start on a damaged snapshot, says what to do, and starts with --repair-channels', async () => {
    const sold = await seller('damaged-snapshot');
    const first = await sold.start();
    const payer = await chain.createAccount({ usdc: 1_000_000n });
    const { pay } = referencePay(payer, 10);
    for (let i = 0; i < 2; i++) expect((await pay(`${sold.url}/echo`, jsonPost({ i }))).status).toBe(200);
    first.child.kill('SIGTERM');
    await first.exited;
    // Opened once more (the journal folded into the snapshot), then the snapshot cut short.
    await (await fileChannelStore(sold.channels)).close();
    const snapshot = join(sold.channels, 'channels.snapshot');
    await truncate(snapshot, (await readFile(snapshot)).length - 20);

    const refused = await sold.start([], { healthy: false });
    expect(await refused.exited).toBe(1);
    expect(refused.output()).toContain(`market: the channel snapshot ${snapshot} is damaged: it ends in the middle of a line`);
    expect(refused.output()).toContain('--repair-channels');

    try {
      const repaired = await sold.start(['--repair-channels']);
      await eventually(repaired.output, (text) => text.includes('repaired: 0 channel(s) kept'), 'the repair told', 10_000, {
        context: repaired.output,
      });
      // The channel it lost starts again from the chain: the payer resynchronises and is served.
      expect((await pay(`${sold.url}/echo`, jsonPost({ i: 2 }))).status).toBe(200);
    } finally {
      await sold.stopAll();
    }
  }, 60_000);
});
