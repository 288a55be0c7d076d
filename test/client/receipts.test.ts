/**
 * Signed receipts on every paid answer, as the buyer checks them: our skill server signs one for
 * exact, upto and channel calls (the amount charged, the payment, the body's digest) with the key
 * the listing names as `receiptSigner`, and our client verifies it; a receipt by another key, for
 * another amount or for another body is refused with the reason, and the paid result is kept. The
 * reference `@x402/hono` server signs none and is paid as before. Local chain, real signatures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { x402ResourceServer } from '@x402/hono';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ReceiptError, type Skill } from 'skill-market/client';
import { createSkillHandler, serve, skill, type SkillServer } from 'skill-market/creator';
import { bodyDigest, encodeReceiptHeader, RECEIPT_HEADER, readReceiptHeader, signSkillReceipt } from 'skill-market/x402';
import { tool } from '../mcp/support';
import { approvePermit2 } from '../support/chain/upto';
import { spawnMarket } from '../support/process';
import { startBatchFacilitator } from '../support/chain/batch-facilitator';
import { loopbackServeOptions, recordingLogger } from '../support/skill-server';
import { type AnswerDroppingProxy, startAnswerDroppingProxy } from './support/answer-dropping-proxy';
import { serveForecast } from './support/reference-server';
import { mcpClient } from './support/mcp';
import { useWorld } from './support/world';

const world = useWorld({ chain: true });
const receiptKey = generatePrivateKey();
const receiptAccount = privateKeyToAccount(receiptKey);
let server: SkillServer;
let payee: `0x${string}`;
let fixed: Skill;
let measured: Skill;
let channelled: Skill;
let dropping: AnswerDroppingProxy;
let folder: string;
const stops: (() => unknown)[] = [];

/** How the front in front of our server changes a paid answer (none: passed as it is). */
let tamper: ((response: Response) => Promise<Response>) | undefined;

async function register(name: string, endpoint: string, price: string, to = payee): Promise<Skill> {
  const res = await world.creator.register({
    name,
    endpoint,
    price,
    paymentAddress: to,
    receiptSigner: receiptAccount.address,
    network: world.chain.network,
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  return (await res.json()) as Skill;
}

beforeAll(async () => {
  payee = await world.payee();
  folder = await mkdtemp(join(tmpdir(), 'receipts-'));
  // The front the listings name: it forwards to our server, and lets a test alter the paid answer.
  let target = '';
  const front = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (request) => {
      const url = new URL(request.url);
      const forwarded = await fetch(`${target}${url.pathname}`, {
        method: request.method,
        headers: request.headers,
        body: request.method === 'POST' ? await request.text() : undefined,
      });
      const paid = forwarded.status === 200 && forwarded.headers.has(RECEIPT_HEADER);
      return paid && tamper ? tamper(forwarded) : forwarded;
    },
  });
  stops.push(() => front.stop(true));
  const frontUrl = `http://127.0.0.1:${front.port}`;
  server = await serve(
    {
      fixed: skill({ price: '$0.01' }, (input: { text: string }) => ({ echo: input.text })),
      measured: skill({ price: '$0.01', upto: true }, (input: { units: number }, { charge }) => {
        charge(BigInt(input.units) * 100n);
        return { units: input.units };
      }),
    },
    loopbackServeOptions(world.chain, world.facilitatorUrl, payee, { receiptKey, publicUrl: frontUrl }),
  );
  stops.push(() => server.stop());
  target = server.url;
  fixed = await register('fixed', `${frontUrl}/fixed`, '$0.01');
  measured = await register('measured', `${frontUrl}/measured`, '$0.01');

  // Channels: our handler through the batch-settlement facilitator, signing with the same key.
  const facilitator = startBatchFacilitator(world.chain, await world.chain.createAccount());
  stops.push(() => facilitator.stop());
  const channelPayee = await world.payee();
  const authorizer = await world.chain.createAccount();
  const app = createSkillHandler(
    { tally: skill({ price: '$0.001' }, (input: { n: number }) => ({ n: input.n })) },
    {
      payTo: channelPayee,
      facilitatorUrl: facilitator.url,
      network: world.chain.network,
      asset: world.asset,
      logger: recordingLogger(),
      channels: { receiverAuthorizerKey: authorizer.privateKey, store: join(folder, 'channels') },
      receiptSigner: receiptAccount,
    },
  );
  const channelServer = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (r) => app.fetch(r) });
  stops.push(
    () => channelServer.stop(true),
    () => app.close(),
  );
  // The same server behind a proxy that can lose an answer on its way back (listed as its own skill).
  dropping = await startAnswerDroppingProxy(`http://127.0.0.1:${channelServer.port}`);
  stops.push(() => dropping.close());
  channelled = await register('tally', `${dropping.url}/tally`, '$0.001', channelPayee);
}, 60_000);

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await rm(folder, { recursive: true, force: true });
});

describe('signed receipts our client verifies', () => {
  it('an exact call: the price, the settlement transaction and the body, signed by the listed key; kept in the usage history', async () => {
    const payer = await world.payer();
    const market = world.market({ wallet: payer, apiKey: world.consumerKey });
    const { result, receipt } = await market.callWithReceipt(fixed.slug, { text: 'hi' });
    expect(result).toEqual({ echo: 'hi' });
    expect(receipt!.signed?.valid).toBe(true);
    const signed = receipt!.signed!.receipt!;
    expect(signed.payload).toMatchObject({
      skill: 'fixed',
      scheme: 'exact',
      amount: '10000',
      payer: payer.address,
      network: world.chain.network,
      transaction: receipt!.transaction!,
      cumulativeAmount: '0',
    });
    expect(signed.payload.resourceUrl).toBe(fixed.endpoint);
    await market.flush();
    const history = await fetch(`${world.registryUrl}/analytics/usage`, { headers: { Authorization: `Bearer ${world.consumerKey}` } });
    const records = (await history.json()) as { paymentRef: string; receipt: unknown }[];
    expect(records.find((r) => r.paymentRef === receipt!.transaction)?.receipt).toEqual(signed);
  });

  it('an upto call: the handler’s charge, below the maximum, and exactly that left the payer', async () => {
    const payer = await world.payer(100_000n);
    await approvePermit2(world.chain, payer);
    const { receipt } = await world.market({ wallet: payer, payment: 'upto' }).callWithReceipt(measured.slug, { units: 42 });
    expect(receipt!.signed).toMatchObject({ valid: true, receipt: { payload: { scheme: 'upto', amount: '4200', skill: 'measured' } } });
    expect(BigInt(receipt!.signed!.receipt!.payload.amount)).toBeLessThan(BigInt(measured.priceAtomic));
    expect(await world.chain.balanceOf(payer.address)).toBe(100_000n - 4_200n);
  });

  it('a channel call: the charge, the channel and its cumulative charge after the call', async () => {
    const payer = await world.payer();
    const market = world.market({ wallet: payer, payment: 'channel' });
    await market.call(channelled.slug, { n: 1 });
    const { receipt } = await market.callWithReceipt(channelled.slug, { n: 2 });
    expect(receipt!.signed?.valid).toBe(true);
    expect(receipt!.signed!.receipt!.payload).toMatchObject({
      scheme: 'batch-settlement',
      amount: '1000',
      transaction: receipt!.channelId!,
      cumulativeAmount: '2000',
      payer: payer.address,
    });
  });

  it('a channel answer lost on its way is sent again with its receipt, which still holds', async () => {
    const market = world.market({ wallet: await world.payer(), payment: 'channel' });
    await market.call(channelled.slug, { n: 1 });
    dropping.drop(1);
    const { result, receipt } = await market.callWithReceipt(channelled.slug, { n: 2 });
    expect(result).toEqual({ n: 2 });
    expect(dropping.requests.at(-2)?.status).toBe('dropped');
    expect(receipt!.signed).toMatchObject({ valid: true, receipt: { payload: { amount: '1000', cumulativeAmount: '2000' } } });
  });
});

describe('receipts our client refuses, keeping the paid result', () => {
  /** Re-signs the answer's receipt with `key` after `change`, or alters the body; the answer goes on. */
  const resign =
    (change: { key?: `0x${string}`; amount?: string; body?: string }) =>
    async (response: Response): Promise<Response> => {
      const read = readReceiptHeader(response.headers);
      if (read?.type !== 'receipt') throw new Error('no receipt to alter');
      const headers = new Headers(response.headers);
      const body = change.body ?? (await response.text());
      if (change.key || change.amount) {
        const signer = privateKeyToAccount(change.key ?? receiptKey);
        const altered = { ...read.receipt.payload, ...(change.amount ? { amount: change.amount } : {}) };
        headers.set(RECEIPT_HEADER, encodeReceiptHeader(await signSkillReceipt(signer, altered)));
      }
      headers.delete('content-length');
      return new Response(body, { status: response.status, headers });
    };

  async function refused(change: Parameters<typeof resign>[0]): Promise<ReceiptError> {
    tamper = resign(change);
    try {
      const payer = await world.payer();
      const error = await world
        .market({ wallet: payer })
        .call(fixed.slug, { text: 'paid' })
        .catch((e: unknown) => e);
      if (!(error instanceof ReceiptError)) throw new Error(`expected a ReceiptError, got ${String(error)}`);
      expect(error.code).toBe('receipt_invalid');
      expect(error.charged).toBe('yes');
      expect(error.result.receipt?.signed?.valid).toBe(false);
      return error;
    } finally {
      tamper = undefined;
    }
  }

  it('a receipt signed by another key', async () => {
    const error = await refused({ key: generatePrivateKey() });
    expect(error.reason).toContain(`not the listed receipt signer ${receiptAccount.address}`);
    expect(error.result.result).toEqual({ echo: 'paid' });
  });

  it('a receipt for another amount than was charged (by the listed key)', async () => {
    const error = await refused({ amount: '9000' });
    expect(error.reason).toBe('the receipt amount 9000 differs from the amount charged, 10000');
  });

  it('a receipt for more than the listed price', async () => {
    const error = await refused({ amount: '10001' });
    expect(error.reason).toBe('the receipt amount 10001 is above the listed price 10000');
  });

  it('a receipt whose amount was altered after signing', async () => {
    tamper = async (response) => {
      const read = readReceiptHeader(response.headers);
      if (read?.type !== 'receipt') throw new Error('no receipt');
      const headers = new Headers(response.headers);
      headers.set(RECEIPT_HEADER, encodeReceiptHeader({ ...read.receipt, payload: { ...read.receipt.payload, amount: '1' } }));
      return new Response(await response.text(), { status: 200, headers });
    };
    try {
      const result = await world.market({ wallet: await world.payer(), receipts: 'flag' }).callWithReceipt(fixed.slug, { text: 'x' });
      expect(result.result).toEqual({ echo: 'x' });
      expect(result.receipt!.signed).toMatchObject({ valid: false });
      expect((result.receipt!.signed as { reason: string }).reason).toContain('not the listed receipt signer');
    } finally {
      tamper = undefined;
    }
  });

  it('market call prints the paid result, then the refused receipt, and exits 1', async () => {
    tamper = resign({ key: generatePrivateKey() });
    try {
      const payer = await world.payer();
      const env = {
        XDG_CONFIG_HOME: join(folder, `cli-${payer.address}`),
        MARKET_API_URL: world.registryUrl,
        MARKET_PRIVATE_KEY: payer.privateKey,
      };
      const args = ['call', fixed.slug, '{"text":"cli"}', '--payment', 'exact', '--network', world.chain.network];
      const child = spawnMarket([...args, '--asset', world.chain.token.address], env, folder);
      const [code, stdout, stderr] = await Promise.all([
        child.exited,
        new Response(child.stdout).text(),
        new Response(child.stderr).text(),
      ]);
      expect(code).toBe(1);
      expect(JSON.parse(stdout)).toEqual({ echo: 'cli' });
      expect(stderr).toContain('receipt refused: ');
      expect(stderr).toContain('(charged: yes)');
    } finally {
      tamper = undefined;
    }
  });

  it('the MCP tool gives the agent the paid result with the refusal', async () => {
    tamper = resign({ key: generatePrivateKey() });
    const agent = await world.payer();
    const client = await mcpClient(world, join(folder, `mcp-${agent.address}`), 1_000_000n, { wallet: agent, payment: 'exact' });
    try {
      const answer = await tool(client, 'call_skill', { slug: fixed.slug, input: { text: 'agent' } });
      expect(answer.isError).toBe(true);
      expect(answer.structuredContent).toMatchObject({ error: { code: 'receipt_invalid', charged: 'yes', result: { echo: 'agent' } } });
    } finally {
      tamper = undefined;
      await client.close();
    }
  });

  it('a receipt for another body than the one received', async () => {
    const body = JSON.stringify({ success: true, result: { echo: 'forged' }, timestamp: new Date().toISOString() });
    const error = await refused({ body });
    expect(error.reason).toBe('the receipt bodyDigest does not match the answer body');
    expect(bodyDigest(body)).not.toBe(error.result.receipt!.signed!.receipt!.payload.bodyDigest);
  });
});

describe('a server that signs no receipt', () => {
  it('the reference @x402/hono server is paid as before, with no receipt', async () => {
    const referencePayee = await world.payee();
    const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: world.facilitatorUrl })).register(
      world.chain.network,
      new ExactEvmScheme(),
    );
    const { server: reference, skill: forecast } = await serveForecast(world, resourceServer, {
      payee: referencePayee,
      price: 10_000n,
      observe: (_c, next) => next(),
    });
    stops.push(() => reference.stop(true));
    const payer = await world.payer();
    const { result, receipt } = await world.market({ wallet: payer }).callWithReceipt(forecast.slug, { city: 'Lyon' });
    expect(result).toEqual({ city: 'Lyon', forecast: 'sunny' });
    expect(receipt!.amount).toBe('10000');
    expect(receipt!.signed).toBeUndefined();
    expect(await world.chain.balanceOf(referencePayee)).toBe(10_000n);
  });
});
