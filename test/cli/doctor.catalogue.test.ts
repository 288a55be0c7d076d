/**
 * `market doctor --endpoint` asks each paid operation of a running skill server without payment and
 * names what crawling catalogues would drop or refuse of its 402; a server within every limit passes.
 */
import { afterAll, describe, expect, it } from 'bun:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { serve, type SkillServer, type Skills, skill } from 'skill-market/creator';
import { checkCatalogueLimits } from '../../src/doctor/catalogue';

const CDP = 'https://api.cdp.coinbase.com/platform/v2/x402';
const handler = () => ({ ok: true });
const servers: SkillServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.stop())));

async function running(skills: Skills, extra: { serviceName?: string } = {}): Promise<string> {
  const server = await serve(skills, {
    port: 0,
    hostname: '127.0.0.1',
    wallet: privateKeyToAccount(generatePrivateKey()).address,
    network: 'eip155:84532',
    facilitatorUrl: 'http://127.0.0.1:9',
    trackCalls: false,
    channels: false,
    env: {},
    logger: { info() {}, warn() {}, error() {} },
    ...extra,
  });
  servers.push(server);
  return server.url;
}

describe('market doctor: catalogue limits', () => {
  it('passes a server whose 402s are within every limit', async () => {
    const endpoint = await running({ tides: skill({ price: '$0.001', description: 'Tide times', groups: ['sea'] }, handler) });
    expect(await checkCatalogueLimits({ network: 'eip155:84532', endpoint, facilitatorUrl: CDP }, 3_000)).toMatchObject({
      status: 'ok',
      detail: "1 paid operation(s) answer a 402 within the catalogues' limits",
    });
  });

  it('names each paid operation whose 402 a catalogue would drop or refuse', async () => {
    const endpoint = await running(
      {
        cheap: skill({ price: '$0.0005' }, handler),
        tagged: skill({ price: '$0.01', groups: ['a', 'b', 'c', 'd', 'e', 'f'] }, handler),
      },
      { serviceName: 'A service name far longer than thirty-two characters' },
    );
    const result = await checkCatalogueLimits({ network: 'eip155:84532', endpoint, facilitatorUrl: CDP }, 3_000);
    expect(result.status).toBe('warn');
    expect(result.detail).toContain("/cheap: asks less than $0.001, the least CDP's facilitator settles");
    // The server drops what the Bazaar would refuse (and said so at start), so the 402 stays within.
    expect(result.detail).not.toContain('serviceName');
    expect(result.detail).not.toContain('/tagged');
    // Under another facilitator the price is no concern.
    expect(await checkCatalogueLimits({ network: 'eip155:84532', endpoint, facilitatorUrl: 'http://127.0.0.1:9' }, 3_000)).toMatchObject({
      status: 'ok',
    });
  });

  it('warns when the server has no OpenAPI document to discover it by', async () => {
    const bare = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('no', { status: 404 }) });
    try {
      const result = await checkCatalogueLimits({ network: 'eip155:84532', endpoint: `http://127.0.0.1:${bare.port}` }, 3_000);
      expect(result).toMatchObject({ status: 'warn', detail: expect.stringContaining('/openapi.json answers HTTP 404') });
    } finally {
      bare.stop(true);
    }
  });
});
