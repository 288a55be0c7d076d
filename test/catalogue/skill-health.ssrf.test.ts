/**
 * The health prober's SSRF guard against the forms that slip past a plain block list: every IPv6
 * spelling of a loopback, private, link-local or unspecified address (IPv4-compatible, mapped,
 * translated, NAT64, 6to4, Teredo), and DNS rebinding (a name that answers a public address to
 * the check and loopback to the connection): the probe resolves once and connects to the address
 * it checked, keeping the name in the Host header and as the TLS server name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HEALTH_DEFAULTS } from '../../src/config';
import { createHealthProber } from '../../src/registry/modules/skill-health';
import { isPublicAddress, pinnedTarget, type Resolve } from '../../src/net';
import { json, newCreator, type Creator } from '../support/catalogue';
import { oneDatabase } from '../support/database';
import { memoryLogger, registryFixture } from '../support/registry';

describe('IPv6 forms of non-public addresses', () => {
  const refused = [
    '::7f00:1', // IPv4-compatible 127.0.0.1
    '::127.0.0.1',
    '::a9fe:a9fe', // IPv4-compatible 169.254.169.254
    '::8.8.8.8', // IPv4-compatible: deprecated, never a server
    '::ffff:0:7f00:1', // IPv4-translated 127.0.0.1
    '::ffff:0:10.0.0.1',
    '::ffff:7f00:1', // IPv4-mapped, hex spelling
    '0:0:0:0:0:ffff:a9fe:a9fe',
    '::ffff:0.0.0.0',
    '64:ff9b::7f00:1', // NAT64 of 127.0.0.1
    '64:ff9b::10.1.2.3',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b:1::808:808', // NAT64 local-use prefix
    '2002:7f00:1::', // 6to4 of 127.0.0.1
    '2002:a00:1::1',
    '2002:c0a8:101::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2', // Teredo
    '0:0:0:0:0:0:0:1',
    '::',
    '::1',
    'fe80::1%eth0',
    'febf::1',
    'fec0::1',
    'fc00::1',
    '100::1',
    '2001:db8::1',
    '3fff::1',
    '5f00::1',
    '4000::1',
    'ff02::1',
  ];
  for (const address of refused) it(`refuses ${address}`, () => expect(isPublicAddress(address)).toBe(false));

  const allowed = ['2606:4700::1111', '2a00:1450:4001:81c::200e', '64:ff9b::808:808', '2002:808:808::1', '::ffff:5db8:d822', '1.1.1.1'];
  for (const address of allowed) it(`allows the public ${address}`, () => expect(isPublicAddress(address)).toBe(true));
});

for (const kind of oneDatabase) {
  describe(`probing a name that rebinds, on ${kind}`, () => {
    const fx = registryFixture(kind, {
      catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 },
      health: { ...HEALTH_DEFAULTS, enabled: false, allowPrivateAddresses: false },
      readCacheMs: 0,
    });
    let creator: Creator;
    beforeAll(async () => {
      creator = await newCreator(fx.request);
      await creator.group('tools');
    });

    it('connects to the address it checked, never to what a second lookup answers', async () => {
      const res = await creator.register({ name: 'rebound', endpoint: 'https://rebind.example.com:8443', groups: ['tools'] });
      expect(res.status).toBe(201);
      const lookups: string[] = [];
      // The first answer is public; every later one is loopback, as a rebinding name answers.
      const resolve: Resolve = async (host) => {
        lookups.push(host);
        return lookups.length === 1 ? ['93.184.216.34'] : ['127.0.0.1'];
      };
      // The network as the operating system sees it: a host name is looked up (again) by the
      // same resolver at connect time; an address is connected to as it is. Nothing leaves the machine.
      const connections: { address: string; host: string | null; serverName: string | undefined }[] = [];
      const network = (async (url: string | URL, init?: RequestInit & { tls?: { serverName?: string } }) => {
        const hostname = new URL(String(url)).hostname.replace(/^\[|\]$/g, '');
        const address = isIP(hostname) ? hostname : (await resolve(hostname))[0]!;
        connections.push({ address, host: new Headers(init?.headers).get('host'), serverName: init?.tls?.serverName });
        return new Response('{}');
      }) as typeof fetch;
      const prober = createHealthProber({
        db: fx.database.db,
        config: fx.config.health,
        clock: fx.clock,
        logger: memoryLogger().logger,
        resolve,
        fetch: network,
      });
      expect(await prober.probeNow()).toMatchObject({ probed: 1, up: 1 });
      expect(lookups).toEqual(['rebind.example.com']);
      // /health, then the skill's live 402 (the server reports no offers): both to the address checked.
      expect(connections).toEqual([
        { address: '93.184.216.34', host: 'rebind.example.com:8443', serverName: 'rebind.example.com' },
        { address: '93.184.216.34', host: 'rebind.example.com:8443', serverName: 'rebind.example.com' },
      ]);
      expect((await json(await fx.request(`/skills/${(await json(res)).slug}`))).status).toBe('up');
    });
  });
}

describe('a pinned request over real TLS', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pinned-tls-'));
  let server: ReturnType<typeof Bun.serve>;
  let ca: string;
  beforeAll(() => {
    const made = Bun.spawnSync(
      [
        'openssl',
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=skills.example.test',
        '-addext',
        'subjectAltName=DNS:skills.example.test',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stderr: 'pipe' },
    );
    if (made.exitCode !== 0) throw new Error(`openssl could not make a test certificate: ${made.stderr.toString()}`);
    ca = readFileSync(join(dir, 'cert.pem'), 'utf8');
    server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      tls: { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: ca },
      fetch: (request) => Response.json({ host: request.headers.get('host') }),
    });
  });
  afterAll(() => {
    server?.stop(true);
    rmSync(dir, { recursive: true, force: true });
  });

  it('reaches the checked address while the server sees its own name, and the certificate is checked against that name', async () => {
    const url = new URL(`https://skills.example.test:${server.port}/health`);
    const target = pinnedTarget(url, '127.0.0.1');
    expect(target.url.host).toBe(`127.0.0.1:${server.port}`);
    const res = await fetch(target.url, { headers: target.headers, tls: { ...target.tls, ca } });
    expect(await res.json()).toEqual({ host: `skills.example.test:${server.port}` });
    // The same certificate for another name is refused: the name verified is the URL's, not the address's.
    const other = pinnedTarget(new URL(`https://elsewhere.example.test:${server.port}/health`), '127.0.0.1');
    await expect(fetch(other.url, { headers: other.headers, tls: { ...other.tls, ca } })).rejects.toThrow();
  });

  it('brackets an IPv6 address and sends no server name for an address literal', () => {
    expect(pinnedTarget(new URL('https://skills.example.test/health'), '2606:4700::1111').url.toString()).toBe(
      'https://[2606:4700::1111]/health',
    );
    expect(pinnedTarget(new URL('https://93.184.216.34/health'), '93.184.216.34').tls).toBeUndefined();
  });
});
