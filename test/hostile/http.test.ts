/**
 * What only shows on the wire, over real sockets: requests without a usable Host, the listener's
 * own refusals (413), unknown methods, pipelined requests — for the registry, the facilitator and
 * the skill server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { LISTENER_OPTIONS } from '../../src/http';
import { type LocalChain, startChain } from '../support/chain';
import { oneDatabase } from '../support/database';
import { type FacilitatorFixture, startFacilitatorFixture } from '../support/facilitator';
import { registryFixture } from '../support/registry';
import { exchange, type RawAnswer } from './raw-http';
import { expectSecurityHeaders } from './support';

/** The registry's and facilitator's refusal: JSON error shape, request id in header and body. */
function expectErrorShape(answer: RawAnswer, status: number) {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toContain('application/json');
  const body = JSON.parse(answer.body) as { error: string; code: string; requestId: string };
  expect(typeof body.error).toBe('string');
  expect(body.requestId).toBe(answer.headers['x-request-id']!);
}

const HOSTLESS = [
  ['HTTP/1.0 without Host', 'GET /health HTTP/1.0\r\n\r\n'],
  ['HTTP/1.1 with an empty Host', 'GET /health HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n'],
  ['a Host that makes no URL', 'GET /health HTTP/1.1\r\nHost: [::\r\nConnection: close\r\n\r\n'],
  ['a Host with a space', 'GET /health HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n'],
] as const;

/** Requests both JSON servers (registry, facilitator) must refuse in the error shape. */
function refusalsOf(port: () => number, post: string) {
  it('answers a declared body over the limit 413 in the error shape, before it arrives', async () => {
    const [answer] = await exchange(
      port(),
      `POST ${post} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\nConnection: close\r\n\r\n{}`,
    );
    expectErrorShape(answer!, 413);
  });

  it('answers a chunked body that grows over the limit 413 in the error shape', async () => {
    const chunk = 'a'.repeat(64 * 1024);
    const chunks = Array.from({ length: 20 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('');
    const [answer] = await exchange(
      port(),
      `POST ${post} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunks}0\r\n\r\n`,
    );
    expectErrorShape(answer!, 413);
  });

  it('answers TRACE and other methods no route takes 404 in the error shape', async () => {
    // (A method Bun's parser does not know at all, e.g. BREW, never reaches us: Bun closes the connection.)
    for (const method of ['TRACE', 'PROPFIND', 'PURGE']) {
      const [answer] = await exchange(port(), `${method} /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expectErrorShape(answer!, 404);
    }
  });
}

for (const kind of oneDatabase) {
  describe(`registry over a socket on ${kind}`, () => {
    const fx = registryFixture(kind);
    let port = 0;
    beforeAll(() => {
      fx.registry.app.listen({ hostname: '127.0.0.1', port: 0, ...LISTENER_OPTIONS });
      port = fx.registry.app.server!.port!;
    });
    afterAll(() => fx.registry.app.stop());

    for (const [what, raw] of HOSTLESS) {
      it(`answers ${what} with the route's answer, never a 500 or an error page`, async () => {
        const [answer] = await exchange(port, raw);
        expect(answer!.status).toBe(200);
        expect(JSON.parse(answer!.body)).toMatchObject({ status: 'ok' });
        expect(answer!.headers['x-request-id']).toBeTruthy();
      });
    }

    it('answers a refusal without Host in the error shape too', async () => {
      const [answer] = await exchange(port, 'GET /skills/%00 HTTP/1.0\r\n\r\n');
      expectErrorShape(answer!, 400);
    });

    refusalsOf(() => port, '/analytics/view');

    it('answers TRACE / and every method the pages do not take 404 in the error shape, with the security headers', async () => {
      for (const path of ['/', '/dashboard/keys', '/skill/some-skill', '/docs']) {
        for (const method of ['TRACE', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND']) {
          const [answer] = await exchange(port, `${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
          expect(`${method} ${path} ${answer!.status}`).toBe(`${method} ${path} 404`);
          expectErrorShape(answer!, 404);
          expectSecurityHeaders(new Headers(answer!.headers), `${method} ${path}`);
        }
      }
    });

    if (kind === 'embedded') {
      // On PostgreSQL this is Bun's HTTP server closing a connection on which a second request
      // arrives while the first answer is still pending (any handler that awaits I/O); see the
      // pipelining note in README.md.
      it('answers two pipelined requests sent in one write, in order', async () => {
        const answers = await exchange(
          port,
          'GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
        );
        expect(answers.map((a) => a.status)).toEqual([200, 404]);
      });
    }
  });
}

describe('facilitator over a socket', () => {
  let chain: LocalChain;
  let f: FacilitatorFixture;
  let port = 0;
  beforeAll(async () => {
    chain = await startChain({ payers: 1 });
    f = await startFacilitatorFixture(chain, 'embedded');
    f.facilitator.app.listen({ hostname: '127.0.0.1', port: 0, ...LISTENER_OPTIONS });
    port = f.facilitator.app.server!.port!;
  }, 60_000);
  afterAll(async () => {
    await f.facilitator.app.stop();
    await f.close();
    await chain.stop();
  });

  for (const [what, raw] of HOSTLESS) {
    it(`answers ${what} with the route's answer`, async () => {
      const [answer] = await exchange(port, raw);
      expect(answer!.status).toBe(200);
      expect(JSON.parse(answer!.body)).toMatchObject({ status: 'ok' });
    });
  }

  refusalsOf(() => port, '/verify');

  it('sends the security headers with its answers and refusals (no HSTS: it has no public https URL)', async () => {
    for (const request of [
      'GET /health HTTP/1.1',
      'GET /supported HTTP/1.1',
      'GET /nope HTTP/1.1',
      'TRACE / HTTP/1.1',
      'POST /verify HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 1',
    ]) {
      const [answer] = await exchange(port, `${request}\r\nHost: x\r\nConnection: close\r\n\r\n${request.startsWith('POST') ? '{' : ''}`);
      const policy = expectSecurityHeaders(new Headers(answer!.headers), request);
      expect(policy).toStartWith("default-src 'none'");
      expect(answer!.headers['strict-transport-security']).toBeUndefined();
    }
  });

  it('answers a body nested deeper than the guard 400 in the error shape', async () => {
    const body = `{"x402Version":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    const [answer] = await exchange(
      port,
      `POST /verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expectErrorShape(answer!, 400);
  });
});

describe('skill server over a socket', () => {
  let server: SkillServer;
  beforeAll(async () => {
    server = await serve(
      { echo: skill({ price: '$0.01', inputSchema: { type: 'object' } }, (input: unknown) => input) },
      {
        port: 0,
        hostname: '127.0.0.1',
        wallet: '0x000000000000000000000000000000000000dEaD',
        facilitatorUrl: 'http://127.0.0.1:9',
        logger: { info() {}, warn() {}, error() {} },
      },
    );
  });
  afterAll(() => server.stop());

  for (const [what, raw] of HOSTLESS) {
    it(`answers ${what} with its health, never a 500 or an error page`, async () => {
      const [answer] = await exchange(server.port, raw);
      expect(answer!.status).toBe(200);
      expect(JSON.parse(answer!.body)).toMatchObject({ status: 'ok' });
    });
  }

  it('answers a paid request declaring a body over its limit 413 with its JSON error', async () => {
    const [answer] = await exchange(
      server.port,
      'POST /echo HTTP/1.1\r\nHost: x\r\nX-Payment: e30=\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\nConnection: close\r\n\r\n{}',
    );
    expect(answer!.status).toBe(413);
    expect(JSON.parse(answer!.body)).toMatchObject({ success: false });
  });

  it('answers a paid request whose body is nested deeper than the guard 400, before any payment is taken', async () => {
    const body = '['.repeat(50_000) + ']'.repeat(50_000);
    const [answer] = await exchange(
      server.port,
      `POST /echo HTTP/1.1\r\nHost: x\r\nX-Payment: e30=\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(answer!.status).toBe(400);
    expect(JSON.parse(answer!.body).error).toContain('nested deeper than');
  });

  it('answers two pipelined requests sent in one write, in order', async () => {
    const answers = await exchange(
      server.port,
      'GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(answers.map((a) => a.status)).toEqual([200, 404]);
  });
});
