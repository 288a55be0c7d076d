/**
 * How a skill server answers the requests crawlers make besides reading its documents: every HTTP
 * method on a skill's path (POST and GET answer the 402, whose declaration names POST, the way to
 * call; OPTIONS a preflight naming the methods; any other 405 with `Allow`), its page at `/` and
 * its icon, which a crawler finds there or at `/favicon.svg`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSkillHandler, skill, type SkillRequestHandler } from 'skill-market/creator';
import { decodePaymentRequired } from 'skill-market/x402';
import { recordingLogger } from '../support/skill-server';

const asset = { address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', name: 'USDC', version: '2', decimals: 6 } as const;
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const inputSchema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const outputSchema = { type: 'object', properties: { tide: { type: 'number' } } };

let folder: string;
let app: SkillRequestHandler;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'skill-site-'));
  app = createSkillHandler(
    {
      tide: skill({ price: '$0.002', description: 'Next high <tide> & time', inputSchema, outputSchema }, () => ({ tide: 1 })),
    },
    {
      payTo,
      network: 'eip155:84532',
      asset,
      publicUrl: 'https://tides.example',
      serviceName: 'Tide Co',
      logger: recordingLogger(),
      channels: { receiverAuthorizerKey: generatePrivateKey(), store: folder },
    },
  );
});
afterAll(async () => {
  await app?.close();
  await rm(folder, { recursive: true, force: true });
});

const send = (path: string, method = 'GET', init: RequestInit = {}) =>
  app.fetch(new Request(`http://localhost${path}`, { method, ...init }));

describe('the methods of a skill’s path', () => {
  it('answers POST without a payment, with any body or none, and GET the same 402, declaring POST with the schemas in header and body', async () => {
    const answers = [
      await send('/tide', 'POST'),
      await send('/tide', 'POST', { headers: { 'content-type': 'application/json' }, body: '{"city":"Brest"}' }),
      await send('/tide', 'POST', { headers: { 'content-type': 'application/json' }, body: '{"wrong":' }),
      await send('/tide?city=Brest', 'GET'),
    ];
    const header = answers[0]!.headers.get('PAYMENT-REQUIRED');
    for (const res of answers) {
      expect(res.status).toBe(402);
      expect(res.headers.get('PAYMENT-REQUIRED')).toBe(header);
    }
    const declared = decodePaymentRequired(header!).extensions!.bazaar as any;
    expect(declared.info.input).toEqual({ type: 'http', method: 'POST', bodyType: 'json', body: { city: 'example' } });
    expect(declared.schema.properties.input.properties.body).toEqual(inputSchema);
    expect(declared.schema.properties.output.properties.example.properties.result).toEqual(outputSchema);
    const body = (await answers[3]!.json()) as any;
    expect(body.extensions).toEqual({ bazaar: declared });
    expect(body.accepts).toMatchObject({ scheme: 'exact', price: '0.002' });
  });

  it('answers every other method 405 naming the methods allowed, and OPTIONS a preflight naming them too', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE', 'HEAD', 'TRACE']) {
      const res = await send('/tide', method);
      expect({ method, status: res.status, allow: res.headers.get('allow') }).toEqual({ method, status: 405, allow: 'POST, GET, OPTIONS' });
    }
    const options = await send('/tide', 'OPTIONS');
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('POST, GET, OPTIONS');
    const preflight = await send('/tide', 'OPTIONS', {
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toBe('POST, GET, OPTIONS');
    expect((await send('/openapi.json', 'OPTIONS')).headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect((await send('/nowhere', 'OPTIONS')).headers.get('allow')).toBeNull();
  });
});

describe('the server’s page and icon', () => {
  it('serves a page at / naming the server and each skill (text escaped), linking its icon and documents', async () => {
    const res = await send('/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'");
    const page = await res.text();
    expect(page).toContain('<title>Tide Co</title>');
    expect(page).toContain('<code>POST /tide</code> 0.002 USD - Next high &lt;tide&gt; &amp; time');
    expect(page).toContain('<link rel="icon" href="https://tides.example/favicon.svg">');
    expect(page).toContain('href="/openapi.json"');
    expect((await send('/', 'POST')).status).toBe(405);
  });

  it('serves its built-in SVG icon at /favicon.svg to GET and HEAD, and links the creator’s icon instead when given', async () => {
    for (const method of ['GET', 'HEAD']) {
      const res = await send('/favicon.svg', method);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/svg+xml');
    }
    expect(await (await send('/favicon.svg')).text()).toStartWith('<svg xmlns="http://www.w3.org/2000/svg"');
    const branded = createSkillHandler(
      { tide: skill({ price: '$0.002' }, () => ({})) },
      { payTo, asset, network: 'eip155:84532', logger: recordingLogger(), channels: false, iconUrl: 'https://cdn.tides.example/i.png' },
    );
    const page = await (await branded.fetch(new Request('http://localhost/'))).text();
    expect(page).toContain('<link rel="icon" href="https://cdn.tides.example/i.png">');
    await branded.close();
  });
});
