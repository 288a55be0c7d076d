/**
 * Skill health: the registry probes each active skill's server (`GET <server>/health`) and
 * listings show what it found. Rounds are driven by `probeNow()` and the fixture's manual clock,
 * so nothing here waits for time to pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { HEALTH_DEFAULTS } from '../../src/config';
import { createHealthProber, type HealthProberDeps } from '../../src/registry/modules/skill-health';
import { bearer } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { oneDatabase } from '../support/database';
import { freePort } from '../support/process';
import { memoryLogger, registryFixture } from '../support/registry';
import { recordingLogger } from '../support/skill-server';

const health = { ...HEALTH_DEFAULTS, enabled: false, allowPrivateAddresses: true };

/** A real HTTP server on 127.0.0.1 answering `/health` with `status`, counting the requests per path. */
function countingServer(status = 200, headers: Record<string, string> = {}) {
  const hits = new Map<string, number>();
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      const path = new URL(request.url).pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      return new Response('{}', { status, headers });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, hits, stop: () => server.stop(true) };
}

for (const kind of oneDatabase) {
  describe(`skill health on ${kind}`, () => {
    // The probes write from outside the registry app, as a background job does: with the read
    // cache on, listings would show them once the change notification arrives (read-cache.test.ts
    // tests that); here each probe's outcome is read at once, so the cache is off.
    const fx = registryFixture(kind, {
      catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 },
      health,
      readCacheMs: 0,
    });
    let creator: Creator;
    beforeAll(async () => {
      creator = await newCreator(fx.request);
      await creator.group('tools');
    });

    const prober = (overrides: Partial<HealthProberDeps> = {}) =>
      createHealthProber({ db: fx.database.db, config: fx.config.health, clock: fx.clock, logger: memoryLogger().logger, ...overrides });
    /** Registers a skill served at `server` (the call URL is `<server>/<name>`). */
    const register = async (server: string, name = `s-${crypto.randomUUID().slice(0, 8)}`) => {
      const res = await creator.register({ name, endpoint: server, groups: ['tools'] });
      expect(res.status).toBe(201);
      return (await json(res)).slug as string;
    };
    const skillAt = async (slug: string) => json(await fx.request(`/skills/${slug}`));
    const listed = async (query: string) => (await json<any[]>(await fx.request(`/skills?limit=100&${query}`))).map((s) => s.slug);
    /** Takes a test's skills out of later rounds, so each test counts its own probes. */
    const retire = async (...slugs: string[]) => {
      for (const slug of slugs) {
        const r = await fx.request(`/skills/${slug}`, {
          method: 'PATCH',
          headers: { ...bearer(creator.key), 'content-type': 'application/json' },
          body: JSON.stringify({ isActive: false }),
        });
        if (r.status !== 200) throw new Error(`retire ${slug}: ${r.status} ${await r.text()}`);
      }
    };
    const nextInterval = () => fx.clock.advance(fx.config.health.intervalSeconds);
    const pastBackoff = () => fx.clock.advance(fx.config.health.maxBackoffSeconds);

    describe('with a real skill server', () => {
      const wallet = privateKeyToAccount(generatePrivateKey()).address;
      let port: number;
      let server: SkillServer | undefined;
      const start = async () => {
        server = await serve(
          { echo: skill({ price: '$0.001' }, (input) => input) },
          {
            port,
            hostname: '127.0.0.1',
            wallet,
            facilitatorUrl: `http://127.0.0.1:${await freePort()}`,
            trackCalls: false,
            logger: recordingLogger(),
            env: {},
          },
        );
      };
      beforeAll(async () => {
        port = await freePort();
        await start();
      });
      afterAll(async () => {
        await server?.stop();
      });

      it('shows unknown until the first probe, then up with a latency and the time it last answered', async () => {
        const slug = await register(server!.url);
        expect(await skillAt(slug)).toMatchObject({ status: 'unknown', latencyMs: null, lastUpAt: null });
        const round = await prober().probeNow();
        expect(round).toMatchObject({ probed: 1, up: 1, down: 0 });
        const shown = await skillAt(slug);
        expect(shown.status).toBe('up');
        expect(shown.latencyMs).toBeGreaterThanOrEqual(0);
        expect(shown.lastUpAt).toBe(fx.clock.now().toISOString());
        await retire(slug);
      });

      it('probes a server at most once per interval, once for all the skills it serves', async () => {
        const slugs = [await register(server!.url), await register(`${server!.url}/other-name`, 'other-name')];
        pastBackoff(); // due, whatever earlier tests did with this server
        const p = prober();
        expect((await p.probeNow()).probed).toBe(1);
        fx.clock.advance(fx.config.health.intervalSeconds - 1);
        expect((await p.probeNow()).probed).toBe(0);
        fx.clock.advance(1);
        expect((await p.probeNow()).probed).toBe(1);
        await retire(...slugs);
      });

      it('flips to down when the server stops and back to up when it starts again', async () => {
        const slug = await register(server!.url);
        pastBackoff();
        const p = prober();
        await p.probeNow();
        expect((await skillAt(slug)).status).toBe('up');
        expect(await listed('status=up')).toContain(slug);

        await server!.stop();
        nextInterval();
        expect(await p.probeNow()).toMatchObject({ probed: 1, down: 1 });
        expect(await skillAt(slug)).toMatchObject({ status: 'down', latencyMs: null });
        expect(await listed('status=up')).not.toContain(slug);
        expect(await listed('status=down')).toContain(slug);
        expect(await listed('')).toContain(slug); // down only briefly: still in default results

        await start();
        pastBackoff();
        expect(await p.probeNow()).toMatchObject({ probed: 1, up: 1 });
        expect((await skillAt(slug)).status).toBe('up');
        expect(await listed('status=up')).toContain(slug);
        await retire(slug);
      });
    });

    it('backs off while a server fails: the pause doubles with each failure, up to the maximum', async () => {
      const slug = await register(`http://127.0.0.1:${await freePort()}`);
      const p = prober();
      expect((await p.probeNow()).down).toBe(1);
      const { intervalSeconds, maxBackoffSeconds } = fx.config.health;
      const pauses = [1, 2, 4, 8, 16, 32].map((n) => Math.min(n * intervalSeconds, maxBackoffSeconds));
      expect(pauses.at(-1)).toBe(maxBackoffSeconds);
      for (const pause of pauses) {
        fx.clock.advance(pause - 1);
        expect((await p.probeNow()).probed).toBe(0);
        fx.clock.advance(1);
        expect((await p.probeNow()).down).toBe(1);
      }
      await retire(slug);
    });

    it('leaves default search results when down longer than the configured time, and returns when it answers', async () => {
      const alive = countingServer(200);
      const slug = await register(alive.url);
      const p = prober();
      await p.probeNow();
      alive.stop();
      pastBackoff();
      await p.probeNow();
      expect((await skillAt(slug)).status).toBe('down');
      fx.clock.advance(fx.config.health.hideAfterSeconds - 1);
      expect(await listed('')).toContain(slug);
      fx.clock.advance(2);
      expect(await listed('')).not.toContain(slug);
      expect(await listed('q=&status=down')).toContain(slug);
      expect(await listed('status=any')).toContain(slug);
      expect((await fx.request(`/skills/${slug}`)).status).toBe(200); // the detail still answers

      const back = Bun.serve({ hostname: '127.0.0.1', port: Number(new URL(alive.url).port), fetch: () => new Response('ok') });
      try {
        pastBackoff();
        expect((await p.probeNow()).up).toBe(1);
        expect(await listed('')).toContain(slug);
      } finally {
        back.stop(true);
        await retire(slug);
      }
    });

    it('counts a 5xx answer as down and any other answer as up, without following redirects', async () => {
      const failing = countingServer(503);
      const redirecting = countingServer(302, { location: '/elsewhere' });
      const noHealthRoute = countingServer(404);
      const slugs = {
        failing: await register(failing.url),
        redirecting: await register(redirecting.url),
        noHealthRoute: await register(noHealthRoute.url),
      };
      try {
        expect(await prober().probeNow()).toMatchObject({ probed: 3, up: 2, down: 1 });
        expect((await skillAt(slugs.failing)).status).toBe('down');
        expect((await skillAt(slugs.redirecting)).status).toBe('up');
        expect((await skillAt(slugs.noHealthRoute)).status).toBe('up');
        expect(redirecting.hits.get('/health')).toBe(1);
        expect(redirecting.hits.get('/elsewhere')).toBeUndefined();
      } finally {
        for (const s of [failing, redirecting, noHealthRoute]) s.stop();
        await retire(...Object.values(slugs));
      }
    });

    describe('SSRF guard (private addresses not allowed)', () => {
      const guarded = { ...health, allowPrivateAddresses: false };

      it('never sends a request to a server on a loopback address', async () => {
        const local = countingServer(200);
        const slug = await register(local.url);
        try {
          expect(await prober({ config: guarded }).probeNow()).toMatchObject({ probed: 1, refused: 1, up: 0 });
          expect(local.hits.size).toBe(0);
          expect((await skillAt(slug)).status).toBe('unknown');
        } finally {
          local.stop();
          await retire(slug);
        }
      });

      it('refuses a host name that resolves to a private, link-local or mixed set of addresses', async () => {
        const names: Record<string, string[]> = {
          'metadata.example.com': ['169.254.169.254'],
          'intranet.example.com': ['10.1.2.3'],
          'mixed.example.com': ['93.184.216.34', '192.168.1.10'],
          'mapped.example.com': ['::ffff:127.0.0.1'],
          'ula.example.com': ['fd12:3456::1'],
        };
        const slugs = await Promise.all(Object.keys(names).map((host) => register(`https://${host}`)));
        const requested: string[] = [];
        const round = await prober({
          config: guarded,
          resolve: async (host) => names[host] ?? [],
          fetch: (async (url: string | URL) => {
            requested.push(String(url));
            return new Response('ok');
          }) as typeof fetch,
        }).probeNow();
        expect(round).toMatchObject({ probed: 5, refused: 5 });
        expect(requested).toEqual([]);
        await retire(...slugs);
      });

      it('probes public hosts with at most `concurrency` in flight and one per host', async () => {
        const hosts = Array.from({ length: 6 }, (_, i) => `h${i}.example.com`);
        const slugs: string[] = [];
        for (const host of hosts) slugs.push(await register(`https://${host}/a/x`), await register(`https://${host}/b/y`));
        const concurrency = 3;
        const inFlight = new Map<string, number>();
        let total = 0;
        let max = 0;
        let perHostMax = 0;
        // The first wave is held until `concurrency` probes are in flight together: a prober that
        // ran fewer at once would never release it (and the test would time out).
        let releaseWave!: () => void;
        const wave = new Promise<void>((resolve) => (releaseWave = resolve));
        const round = await prober({
          config: { ...guarded, concurrency },
          resolve: async () => ['93.184.216.34'],
          // The probe connects to the checked address and names the host in the Host header.
          fetch: (async (_url: string | URL, init?: RequestInit) => {
            const host = new Headers(init?.headers).get('host')!;
            inFlight.set(host, (inFlight.get(host) ?? 0) + 1);
            perHostMax = Math.max(perHostMax, inFlight.get(host)!);
            max = Math.max(max, ++total);
            if (total === concurrency) releaseWave();
            await wave;
            await Promise.resolve();
            inFlight.set(host, inFlight.get(host)! - 1);
            total--;
            return new Response('ok');
          }) as typeof fetch,
        }).probeNow();
        expect(round).toMatchObject({ probed: 12, up: 12 });
        expect(max).toBe(concurrency);
        expect(perHostMax).toBe(1);
        await retire(...slugs);
      });
    });

    it('starts probing in the background at once and stops cleanly', async () => {
      const target = countingServer(200);
      const slug = await register(target.url);
      const p = prober();
      try {
        const answered = new Promise<void>((resolve) => {
          const check = setInterval(() => {
            if (target.hits.get('/health')) {
              clearInterval(check);
              resolve();
            }
          });
        });
        p.start();
        await answered;
        await p.stop();
        expect(target.hits.get('/health')).toBe(1);
        expect((await skillAt(slug)).status).toBe('up');
      } finally {
        target.stop();
        await retire(slug);
      }
    });
  });
}
