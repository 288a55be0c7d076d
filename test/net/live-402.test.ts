/**
 * The live 402 reader both the registry and the facilitator list offers from: a server's offers
 * verbatim (header, else a v1 or v2 body), nothing from a redirect, an oversized or malformed 402;
 * and its guard without a checked address: the host resolved once, a non-public answer refused
 * before any request, a public one connected to as checked (Host and TLS name kept).
 */
import { afterAll, describe, expect, it } from 'bun:test';
import { isIP } from 'node:net';
import { encodeBase64Json } from 'skill-market/x402';
import { readLive402, type Resolve } from '../../src/net';

const offer = (amount: string) => ({
  scheme: 'exact',
  network: 'eip155:84532',
  amount,
  asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  payTo: `0x${'1'.repeat(40)}`,
  maxTimeoutSeconds: 300,
  extra: { name: 'USDC', version: '2' },
});

const seen: { method: string; path: string }[] = [];
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch(request) {
    const path = new URL(request.url).pathname;
    seen.push({ method: request.method, path });
    const accepts = [offer('1000'), { ...offer('2000'), scheme: 'batch-settlement' }];
    if (path === '/header') {
      return new Response('', {
        status: 402,
        headers: { 'PAYMENT-REQUIRED': encodeBase64Json({ x402Version: 2, resource: { url: request.url }, accepts }) },
      });
    }
    if (path === '/v1') return Response.json({ x402Version: 1, accepts }, { status: 402 });
    if (path === '/redirect') return new Response(null, { status: 302, headers: { location: '/header' } });
    if (path === '/many') return Response.json({ accepts: Array.from({ length: 9 }, () => offer('1')) }, { status: 402 });
    if (path === '/empty') return Response.json({ accepts: [] }, { status: 402 });
    if (path === '/huge') return new Response(`{"accepts":[],"pad":"${'x'.repeat(70_000)}"}`, { status: 402 });
    return new Response('free', { status: 200 });
  },
});
afterAll(() => server.stop(true));

const local = { fetch, timeoutMs: 2_000, allowPrivateAddresses: true, userAgent: 'test' };
const at = (path: string) => `http://127.0.0.1:${server.port}${path}`;

describe('reading a live 402', () => {
  it('keeps the offers verbatim in the server’s order, from the header or a v1 body, with the method asked', async () => {
    const header = await readLive402(at('/header'), local);
    expect(header).toEqual({ type: 'offers', accepts: [offer('1000'), { ...offer('2000'), scheme: 'batch-settlement' }] });
    expect(await readLive402(at('/v1'), local, { method: 'GET' })).toEqual(header);
    expect(seen.slice(-2)).toEqual([
      { method: 'POST', path: '/header' },
      { method: 'GET', path: '/v1' },
    ]);
  });

  it('reads nothing from a redirect, a non-402, too many or no offers, or a body over its bound', async () => {
    for (const path of ['/redirect', '/free', '/many', '/empty', '/huge']) {
      expect((await readLive402(at(path), local)).type).toBe('none');
    }
    expect(seen.filter((s) => s.path === '/header')).toHaveLength(1);
    expect(await readLive402('ftp://127.0.0.1/x', local)).toEqual({ type: 'none', reason: 'not an http(s) URL' });
  });
});

describe('its guard, without a checked address', () => {
  /** The network as the operating system sees it, recording each connection; nothing leaves the machine. */
  const network = (resolve: Resolve, connections: { address: string; host: string | null; serverName?: string | undefined }[]) =>
    (async (url: string | URL, init?: RequestInit & { tls?: { serverName?: string } }) => {
      const hostname = new URL(String(url)).hostname.replace(/^\[|\]$/g, '');
      const address = isIP(hostname) ? hostname : (await resolve(hostname))[0]!;
      connections.push({ address, host: new Headers(init?.headers).get('host'), serverName: init?.tls?.serverName });
      return Response.json({ accepts: [offer('1000')] }, { status: 402 });
    }) as typeof fetch;

  it('refuses a host that resolves to a non-public address before any request', async () => {
    const connections: { address: string; host: string | null }[] = [];
    const resolve: Resolve = async () => ['93.184.216.34', '10.0.0.7'];
    const read = await readLive402('https://mixed.example.com/tides', {
      ...local,
      allowPrivateAddresses: false,
      resolve,
      fetch: network(resolve, connections),
    });
    expect(read).toEqual({ type: 'none', reason: 'refused: mixed.example.com resolves to the non-public address 10.0.0.7' });
    expect(connections).toEqual([]);
    expect((await readLive402(at('/header'), { ...local, allowPrivateAddresses: false })).type).toBe('none');
  });

  it('connects to the public address it checked, never to what a second lookup answers', async () => {
    const lookups: string[] = [];
    const resolve: Resolve = async (host) => {
      lookups.push(host);
      return lookups.length === 1 ? ['93.184.216.34'] : ['127.0.0.1'];
    };
    const connections: { address: string; host: string | null; serverName?: string | undefined }[] = [];
    const read = await readLive402('https://rebind.example.com:8443/tides', {
      ...local,
      allowPrivateAddresses: false,
      resolve,
      fetch: network(resolve, connections),
    });
    expect(read).toEqual({ type: 'offers', accepts: [offer('1000')] });
    expect(lookups).toEqual(['rebind.example.com']);
    expect(connections).toEqual([{ address: '93.184.216.34', host: 'rebind.example.com:8443', serverName: 'rebind.example.com' }]);
  });
});
