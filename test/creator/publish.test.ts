/**
 * What a skill server publishes for x402 crawlers: `GET /.well-known/x402` lists its paid
 * resources, and `GET /openapi.json` is a valid OpenAPI 3.1 document whose every paid operation
 * carries `x-payment-info` with exactly the terms its 402 asks (both offers where it sells over
 * channels, in one x402 entry), the input schema as the request body (local references still
 * resolving), with a contact and guidance for agents.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSkillHandler, ServeConfigError, skill, type SkillRequestHandler } from 'skill-market/creator';
import { recordingLogger } from '../support/skill-server';

const asset = { address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', name: 'USDC', version: '2', decimals: 6 } as const;
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const route = {
  type: 'object',
  definitions: { point: { type: 'object', properties: { lat: { type: 'number' } }, required: ['lat'] } },
  properties: { from: { $ref: '#/definitions/point' }, to: { $ref: '#/definitions/point' } },
  required: ['from', 'to'],
};

let folder: string;
let app: SkillRequestHandler;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'skill-publish-'));
  app = createSkillHandler(
    {
      distance: skill({ price: '$0.001', description: 'Distance between two points', inputSchema: route, groups: ['maps'] }, () => ({
        km: 1,
      })),
      report: skill({ price: '$0.25', outputSchema: { type: 'object', properties: { pages: { type: 'integer' } } } }, () => ({ pages: 1 })),
    },
    {
      payTo,
      network: 'eip155:84532',
      asset,
      publicUrl: 'https://maps.example/',
      serviceName: 'Map Co',
      logger: recordingLogger(),
      channels: { receiverAuthorizerKey: generatePrivateKey(), store: folder },
    },
  );
});
afterAll(async () => {
  await app?.close();
  await rm(folder, { recursive: true, force: true });
});

const get = (path: string, method = 'GET') => app.fetch(new Request(`http://localhost${path}`, { method }));

describe('the discovery documents of a skill server', () => {
  it('lists every paid resource at /.well-known/x402', async () => {
    const res = await get('/.well-known/x402');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toEqual({ version: 1, resources: ['https://maps.example/distance', 'https://maps.example/report'] });
    expect((await get('/.well-known/x402', 'POST')).status).toBe(405);
  });

  it('serves a valid OpenAPI 3.1 document whose local references resolve', async () => {
    for (const path of ['/openapi.json', '/.well-known/openapi.json']) {
      const document = (await (await get(path)).json()) as Record<string, unknown>;
      const validator = new Validator();
      const result = await validator.validate(document);
      expect(result).toEqual({ valid: true });
      expect(validator.version).toBe('3.1');
      const resolved = validator.resolveRefs() as any;
      const body = resolved.paths['/distance'].post.requestBody.content['application/json'].schema;
      expect(body.properties.from).toEqual(route.definitions.point);
    }
  });

  it('gives each paid operation x-payment-info with the price and exactly the offers of its 402', async () => {
    const document = (await (await get('/openapi.json')).json()) as any;
    expect(document.info.title).toBe('Map Co');
    expect(document.servers).toEqual([{ url: 'https://maps.example' }]);
    for (const [name, price] of [
      ['distance', '0.001'],
      ['report', '0.25'],
    ] as const) {
      const operation = document.paths[`/${name}`].post;
      expect(operation.responses['402']).toBeDefined();
      expect(operation.security).toEqual([]);
      const offered = app.termsOf(name)!.paymentRequired.accepts;
      expect(operation['x-payment-info']).toEqual({
        price: { mode: 'fixed', currency: 'USD', amount: price },
        protocols: [
          {
            x402: {
              x402Version: 2,
              accepts: offered.map(({ scheme, network, asset, payTo, amount, maxTimeoutSeconds }) => ({
                scheme,
                network,
                asset,
                payTo,
                amount,
                maxTimeoutSeconds,
              })),
            },
          },
        ],
      });
    }
    const schemes = (name: string) => document.paths[`/${name}`].post['x-payment-info'].protocols[0].x402.accepts.map((a: any) => a.scheme);
    expect(schemes('distance')).toEqual(['exact', 'batch-settlement']);
    expect(schemes('report')).toEqual(['exact']);
    expect(document.paths['/distance'].post.tags).toEqual(['maps']);
  });

  it('follows a price change at once', async () => {
    app.setPrice('report', '$0.3');
    const document = (await (await get('/openapi.json')).json()) as any;
    expect(document.paths['/report'].post['x-payment-info'].price.amount).toBe('0.3');
    expect(document.paths['/report'].post['x-payment-info'].protocols[0].x402.accepts[0].amount).toBe('300000');
  });
});

describe('what the OpenAPI document says of the server', () => {
  it('names a contact (by default the server and its page) and guides agents: POST, the 402, each offer, what is never charged', async () => {
    const document = (await (await get('/openapi.json')).json()) as any;
    expect(document.info.contact).toEqual({ name: 'Map Co', url: 'https://maps.example' });
    const guidance: string = document.info['x-guidance'];
    expect(guidance.length).toBeLessThan(4000);
    for (const text of [
      'Map Co',
      'POST /<name>',
      'PAYMENT-REQUIRED',
      'extensions.bazaar',
      '`exact`',
      '`batch-settlement`',
      'PAYMENT-SIGNATURE',
    ])
      expect(guidance).toContain(text);
    expect(guidance).toContain('eip155:84532');
    expect(document.paths['/report'].post.summary).toBe('report');
  });

  it('takes a contact and guidance of the creator’s', async () => {
    const own = createSkillHandler(
      { echo: skill({ price: '$0.01' }, (input) => input) },
      {
        payTo,
        network: 'eip155:84532',
        asset,
        logger: recordingLogger(),
        channels: false,
        openapi: { contact: { email: ' skills@maps.example ' }, guidance: 'POST /echo with any JSON.' },
      },
    );
    const document = (await (await own.fetch(new Request('http://localhost/openapi.json'))).json()) as any;
    expect(document.info.contact).toEqual({ name: 'skill-market skill server', email: 'skills@maps.example' });
    expect(document.info['x-guidance']).toBe('POST /echo with any JSON.');
    expect(await new Validator().validate(document)).toEqual({ valid: true });
    await own.close();
  });

  it('refuses a contact or guidance it could not publish, naming the field', () => {
    const build = (openapi: unknown) => () =>
      createSkillHandler(
        { echo: skill({ price: '$0.01' }, (input) => input) },
        { payTo, logger: recordingLogger(), channels: false, openapi: openapi as never },
      );
    expect(build({ contact: { email: 'not an email' } })).toThrow(/openapi\.contact\.email/);
    expect(build({ contact: { url: 'ftp://maps.example' } })).toThrow(/openapi\.contact\.url/);
    expect(build({ contact: {} })).toThrow(/openapi\.contact needs/);
    expect(build({ guidance: 'x'.repeat(4001) })).toThrow(/openapi\.guidance/);
    expect(build({ guidance: '  ' })).toThrow(ServeConfigError);
  });
});
