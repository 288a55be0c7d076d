/**
 * The `bazaar` declaration a skill server's 402 carries (x402 `bazaar` extension), checked by the
 * unmodified `@x402/extensions` 2.27 server-side validators and by the reference client, which
 * echoes it in its payment: `info` (POST, a JSON body example fitting the input schema, the paid
 * answer's example) satisfies `schema`, for the `exact` and the `batch-settlement` offer alike; the
 * service metadata sits on `resource` within the Bazaar's rules.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import {
  extractDiscoveryInfo,
  sanitizeResourceServiceMetadata,
  validateDiscoveryExtension,
  validateDiscoveryExtensionSpec,
  type DiscoveryExtension,
} from '@x402/extensions/bazaar';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { decodePaymentRequired, type PaymentRequired } from 'skill-market/x402';
import { recordingLogger } from '../support/skill-server';

const asset = { address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', name: 'USDC', version: '2', decimals: 6 } as const;
const inputSchema = {
  type: 'object',
  properties: { harbour: { type: 'string', minLength: 3 }, days: { type: 'integer', minimum: 1, maximum: 7 } },
  required: ['harbour', 'days'],
};
const outputSchema = { type: 'object', properties: { high: { type: 'string' } }, examples: [{ high: '06:12' }] };

let folder: string;
let server: SkillServer;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'bazaar-declaration-'));
  server = await serve(
    {
      tides: skill(
        { price: '$0.001', description: 'Tide times of a harbour', inputSchema, outputSchema, groups: ['sea', 'Sea', 'weather'] },
        () => ({
          high: '06:12',
        }),
      ),
      plain: skill({ price: '$0.05' }, () => ({ ok: true })),
      huge: skill(
        {
          price: '$0.05',
          inputSchema: { type: 'object', description: 'x'.repeat(20_000) },
          outputSchema: { type: 'object', description: 'y'.repeat(20_000) },
        },
        () => ({}),
      ),
    },
    {
      port: 0,
      hostname: '127.0.0.1',
      wallet: privateKeyToAccount(generatePrivateKey()).address,
      network: 'eip155:84532',
      asset,
      facilitatorUrl: 'http://127.0.0.1:9',
      trackCalls: false,
      logger: recordingLogger(),
      env: {},
      appName: 'Tide Co',
      iconUrl: 'https://tides.example/icon.png',
      publicUrl: 'https://tides.example',
      channels: { receiverAuthorizerKey: generatePrivateKey(), store: folder },
    },
  );
});
afterAll(async () => {
  await server?.stop();
  await rm(folder, { recursive: true, force: true });
});

/** The PaymentRequired of an unpaid call to `name`, as the PAYMENT-REQUIRED header carries it. */
async function offered(name: string): Promise<PaymentRequired> {
  const body = name === 'tides' ? { harbour: 'Brest', days: 2 } : {};
  const res = await fetch(`${server.url}/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(402);
  return decodePaymentRequired(res.headers.get('PAYMENT-REQUIRED')!);
}

describe('the bazaar declaration in a skill server’s 402', () => {
  it('passes the reference validators and describes a POST of a JSON body fitting the input schema', async () => {
    const required = await offered('tides');
    const declared = required.extensions?.bazaar as DiscoveryExtension;
    expect(validateDiscoveryExtension(declared)).toEqual({ valid: true });
    expect(validateDiscoveryExtensionSpec(declared as never)).toEqual({ valid: true });
    expect(declared.info).toEqual({
      input: { type: 'http', method: 'POST', bodyType: 'json', body: { harbour: 'example', days: 1 } },
      output: { type: 'json', example: { success: true, result: { high: '06:12' } } },
    } as never);
    expect((declared.schema as any).properties.input.properties.body).toEqual(inputSchema);
  });

  it('is catalogued by the reference extractor from a payment on either offer, exact and batch-settlement', async () => {
    const required = await offered('tides');
    expect(required.accepts.map((a) => a.scheme)).toEqual(['exact', 'batch-settlement']);
    for (const accepted of required.accepts) {
      const payment = { x402Version: 2, resource: required.resource, accepted, payload: {}, extensions: required.extensions };
      const found = extractDiscoveryInfo(payment as unknown as PaymentPayload, accepted as PaymentRequirements);
      expect(found).toMatchObject({
        resourceUrl: 'https://tides.example/tides',
        method: 'POST',
        description: 'Tide times of a harbour',
        serviceName: 'Tide Co',
        tags: ['sea', 'weather'],
        iconUrl: 'https://tides.example/icon.png',
      });
    }
  });

  it('is echoed by the reference client in the exact payment it signs', async () => {
    const required = await offered('tides');
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: privateKeyToAccount(generatePrivateKey()) });
    client.setSpendControls({ allowedAssets: [{ network: 'eip155:84532', asset: asset.address }] });
    const payment = await client.createPaymentPayload(required as never);
    expect(payment.accepted.scheme).toBe('exact');
    expect(payment.extensions?.bazaar).toEqual(required.extensions!.bazaar);
    expect(extractDiscoveryInfo(payment, payment.accepted)).toMatchObject({ resourceUrl: 'https://tides.example/tides', method: 'POST' });
  });

  it('carries the service metadata on resource as the reference sanitizer keeps it', async () => {
    const { resource } = await offered('tides');
    expect(resource).toMatchObject({ serviceName: 'Tide Co', tags: ['sea', 'weather'], iconUrl: 'https://tides.example/icon.png' });
    expect(sanitizeResourceServiceMetadata(resource as never)).toEqual({
      serviceName: 'Tide Co',
      tags: ['sea', 'weather'],
      iconUrl: 'https://tides.example/icon.png',
    });
  });

  it('declares a skill without schemas as any JSON, and one whose schemas are huge without them, so the header stays small', async () => {
    const plain = await offered('plain');
    expect(validateDiscoveryExtension(plain.extensions!.bazaar as DiscoveryExtension)).toEqual({ valid: true });
    expect(plain.resource.tags).toBeUndefined();
    const res = await fetch(`${server.url}/huge`, { method: 'POST', body: '{}' });
    expect(res.headers.get('PAYMENT-REQUIRED')!.length).toBeLessThan(16 * 1024);
    const huge = decodePaymentRequired(res.headers.get('PAYMENT-REQUIRED')!);
    expect(validateDiscoveryExtension(huge.extensions!.bazaar as DiscoveryExtension)).toEqual({ valid: true });
    expect((huge.extensions!.bazaar as any).info.input).toEqual({ type: 'http', method: 'POST', bodyType: 'json', body: {} });
  });
});
