/**
 * x402scan's crawler finds our skill servers as they are: the unmodified `@agentcash/discovery`
 * (pinned) reads a real serve() skill server on a port, through `/openapi.json` and by probing each
 * skill with every HTTP method, with and without a sample body. Its discover audit (the checks of
 * its `discover` command) raises no error, warning or note for the server or any skill; each skill
 * is indexed as POST at its price, with one x402 protocol; the 402 a probe gets asks exactly that
 * and carries the schemas. What a call then pays (through @x402/fetch, on a local chain) is what the
 * crawler said, and among what our facilitator's Bazaar then lists: the server's live 402.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  attachProbePayload,
  checkEndpointSchema,
  checkL2ForOpenAPI,
  checkL4ForOpenAPI,
  discoverOriginSchema,
  getOpenAPI,
  getWarningsForFavicon,
  getWarningsForL2,
  getWarningsForL3,
  getWarningsForL4,
  getWarningsForOpenAPI,
  isOpenApiParseFailure,
  validatePaymentRequiredDetailed,
  type X402V2PaymentOption,
} from '@agentcash/discovery';
import { HTTPFacilitatorClient } from '@x402/core/http';
import { type DiscoveryExtension, withBazaar } from '@x402/extensions/bazaar';
import { generatePrivateKey } from 'viem/accounts';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import type { TestAccount } from '../support/chain';
import { eventually } from '../support/eventually';
import { freePort } from '../support/process';
import { loopbackServeOptions, startPaymentStack, type PaymentStack } from '../support/skill-server';
import { asked, referenceExactFetch } from '../support/reference-fetch';

const shoutInput = { type: 'object', properties: { text: { type: 'string', minLength: 1 } }, required: ['text'] };
const shoutOutput = { type: 'object', properties: { shout: { type: 'string' } }, required: ['shout'] };
/** Each skill's path, its price in USD as the document gives it, and in the token's atomic units. */
const PRICES = [
  ['/shout', '0.02', '20000'],
  ['/whisper', '0.005', '5000'],
] as const;

let stack: PaymentStack;
let server: SkillServer;
let origin: string;
let payee: `0x${string}`;
let folder: string;

beforeAll(async () => {
  stack = await startPaymentStack({ payers: 1 });
  payee = (await stack.chain.createAccount()).address;
  folder = await mkdtemp(join(tmpdir(), 'agentcash-'));
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  server = await serve(
    {
      shout: skill({ price: '$0.02', description: 'Upper-cases text', inputSchema: shoutInput, outputSchema: shoutOutput }, ({ text }) => ({
        shout: text.toUpperCase(),
      })),
      // Below $0.01: also sold over payment channels, a second offer in its 402.
      whisper: skill({ price: '$0.005', description: 'Lower-cases text' }, (input: { text?: string }) => ({
        whisper: String(input?.text ?? '').toLowerCase(),
      })),
    },
    loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, {
      port,
      publicUrl: origin,
      serviceName: 'Tide Co',
      channels: { receiverAuthorizerKey: generatePrivateKey(), store: folder },
    }),
  );
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await stack?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

/** The warnings `discovery discover <origin>` prints (its runDiscover), each as `code path`. */
async function discoverWarnings(): Promise<string[]> {
  const [openApiResult, favicon] = await Promise.all([getOpenAPI(origin), getWarningsForFavicon(origin)]);
  const raw = openApiResult._unsafeUnwrap();
  expect(raw).not.toBeNull();
  if (raw === null || isOpenApiParseFailure(raw)) throw new Error(`no usable OpenAPI document: ${JSON.stringify(raw)}`);
  const warnings = [...getWarningsForOpenAPI(raw), ...favicon._unsafeUnwrap()];
  const l2 = checkL2ForOpenAPI(raw);
  warnings.push(...getWarningsForL2(l2), ...getWarningsForL4(checkL4ForOpenAPI(raw)));
  for (const route of l2.routes) {
    const url = `${origin}${route.path}`;
    const checked = await checkEndpointSchema({ url });
    expect(checked.found).toBe(true);
    if (!checked.found) continue;
    const paid = checked.advisories.filter((a) => a.source === 'openapi' && a.authMode === 'paid');
    await attachProbePayload(url, paid);
    // The probe's 402 is audited too: without it the audit would skip the payment checks.
    for (const advisory of paid) expect(advisory.paymentRequiredBody).toBeDefined();
    warnings.push(...checked.advisories.flatMap((a) => getWarningsForL3(a)));
  }
  return warnings.map((w) => `${w.code} ${w.path ?? ''}`.trim());
}

const referenceFetch = (account: TestAccount) => referenceExactFetch(stack.chain, account);

describe('@agentcash/discovery (x402scan’s crawler) on a skill server', () => {
  it('finds every skill through /openapi.json as POST, at its price, with one x402 protocol, a contact and guidance', async () => {
    const found = await discoverOriginSchema({ target: origin });
    expect(found.found).toBe(true);
    if (!found.found) return;
    expect(
      found.endpoints.map(({ method, path, authMode, price, pricingMode, protocols }) => ({
        method,
        path,
        authMode,
        price,
        pricingMode,
        protocols,
      })),
    ).toEqual(
      PRICES.map(([path, usd]) => ({
        method: 'POST',
        path,
        authMode: 'paid',
        price: `${usd} USD`,
        pricingMode: 'fixed',
        protocols: ['x402'],
      })),
    );
    expect(found.endpoints.map((e) => e.summary)).toEqual(['Upper-cases text', 'Lower-cases text']);
    expect(found.info).toMatchObject({ title: 'Tide Co' });
    expect(found.guidanceAvailable).toBe(true);
    expect(found.guidance).toContain('POST /<name>');
  });

  it('raises no error, warning or note for the server or any skill in its discover audit', async () => {
    expect(await discoverWarnings()).toEqual([]);
  });

  it('probes each skill with every method, bare and with a sample body: only the 402s are paid, each declaring POST and asking the price', async () => {
    for (const [path, , atomic] of PRICES) {
      const url = `${origin}${path}`;
      for (const sampleInputBody of [undefined, { text: 'example' }]) {
        const probed = await checkEndpointSchema({ url, probe: true, ...(sampleInputBody ? { sampleInputBody } : {}) });
        expect(probed.found).toBe(true);
        if (!probed.found) continue;
        const methods = probed.advisories.map((a) => a.method);
        for (const refused of ['PUT', 'PATCH', 'DELETE', 'HEAD', 'TRACE']) expect(methods).not.toContain(refused);
        const paid = probed.advisories.filter((a) => a.authMode === 'paid');
        // GET answers the same 402 (payment channels send their refunds there); its declaration names POST.
        expect(paid.map((a) => a.method)).toEqual(['GET', 'POST']);
        for (const advisory of paid) {
          const required = advisory.paymentRequiredBody as { extensions: { bazaar: DiscoveryExtension } };
          expect(required.extensions.bazaar.info.input).toMatchObject({ type: 'http', method: 'POST', bodyType: 'json' });
          expect(advisory.paymentOptions?.[0]).toEqual({
            protocol: 'x402',
            version: 2,
            scheme: 'exact',
            network: stack.chain.network,
            asset: stack.chain.token.address,
            amount: atomic,
            payTo: payee,
            maxTimeoutSeconds: 60,
          });
          expect(getWarningsForL3(advisory)).toEqual([]);
          expect(validatePaymentRequiredDetailed(advisory.paymentRequiredBody)).toMatchObject({ valid: true, issues: [] });
        }
        const post = paid[1]!;
        expect(post.paymentOptions?.map((o) => (o as X402V2PaymentOption).scheme)).toEqual(
          path === '/whisper' ? ['exact', 'batch-settlement'] : ['exact'],
        );
        if (path === '/shout') {
          expect(post.inputSchema).toEqual(shoutInput);
          expect((post.outputSchema as any).properties.result).toEqual(shoutOutput);
        }
      }
    }
  });

  it('pays for a call exactly what it said, as the Bazaar then lists it', async () => {
    const payer = await stack.chain.createAccount({ usdc: 1_000_000n });
    let spent = 0n;
    for (const [path, , atomic] of PRICES) {
      const url = `${origin}${path}`;
      const probed = await checkEndpointSchema({ url, probe: true });
      if (!probed.found) throw new Error(`${path} not found by its probe`);
      const post = probed.advisories.find((a) => a.method === 'POST')!;
      const paid = { scheme: 'exact', network: stack.chain.network, asset: stack.chain.token.address, amount: atomic, payTo: payee };
      expect(post.paymentOptions).toContainEqual({ protocol: 'x402', version: 2, ...paid, maxTimeoutSeconds: 60 });
      const declared = (post.paymentRequiredBody as { extensions: { bazaar: DiscoveryExtension } }).extensions.bazaar;
      const payeeBefore = await stack.chain.balanceOf(payee);
      const res = await referenceFetch(payer)(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify((declared.info.input as { body: unknown }).body),
      });
      expect(res.status).toBe(200);
      expect(await stack.chain.balanceOf(payee)).toBe(payeeBefore + BigInt(atomic));
      spent += BigInt(atomic);

      const bazaar = withBazaar(new HTTPFacilitatorClient({ url: stack.facilitatorUrl })).extensions.bazaar;
      // The Bazaar lists what the server's 402 asks (read once the payment catalogued it): the offer paid, as the crawler read it, among them.
      const live = (await asked(url)).accepts;
      const listed = await eventually(
        async () => (await bazaar.listResources({ payTo: payee })).items.find((item) => item.resource === url),
        (item) => Bun.deepEquals(item?.accepts, live),
        `the Bazaar lists the live 402 of ${path}`,
      );
      const offers = listed!.accepts.map(({ scheme, network, asset, amount, payTo }) => ({ scheme, network, asset, amount, payTo }));
      expect(offers as unknown[]).toContainEqual(paid);
      expect((listed!.extensions!.bazaar as DiscoveryExtension).info.input).toMatchObject({ method: 'POST' });
    }
    expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n - spent);
  });
});
