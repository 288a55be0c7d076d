/**
 * CORS on the skill server, in process: preflights, the exposed x402 headers on every answer,
 * restricted origins and CORS turned off. The paid 200 in a real browser: cors.browser.system.test.ts.
 */
import { describe, expect, it } from 'bun:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { CORS_EXPOSED_HEADERS, ServeConfigError, createSkillHandler, skill, type CorsOption } from 'skill-market/creator';
import { recordingLogger } from '../support/skill-server';

const PAGE = 'https://app.example';
const echo = skill(
  { price: '$0.001', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  ({ text }: { text: string }) => ({ echo: text }),
);
const boom = skill({ price: '$0.001' }, () => {
  throw new Error('kaboom');
});

const handler = (cors?: CorsOption) =>
  createSkillHandler(
    { echo, boom },
    {
      payTo: privateKeyToAccount(generatePrivateKey()).address,
      facilitatorUrl: 'http://127.0.0.1:9',
      network: 'eip155:84532',
      logger: recordingLogger(),
      ...(cors === undefined ? {} : { cors }),
    },
  );
const call = (app: ReturnType<typeof handler>, path: string, init: RequestInit & { origin?: string } = {}) =>
  app.fetch(
    new Request(`http://skills.test${path}`, {
      ...init,
      headers: { ...(init.origin ? { origin: init.origin } : {}), ...(init.headers as Record<string, string>) },
    }),
  );
const post = (app: ReturnType<typeof handler>, path: string, body: string, origin?: string, headers: Record<string, string> = {}) =>
  call(app, path, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers }, ...(origin ? { origin } : {}) });
const preflight = (app: ReturnType<typeof handler>, path: string, origin = PAGE) =>
  call(app, path, {
    method: 'OPTIONS',
    origin,
    headers: { 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, payment-signature' },
  });
const accessControl = (res: Response) =>
  Object.fromEntries([...res.headers].filter(([name]) => name.startsWith('access-control-') || name === 'vary'));

describe('skill server CORS by default', () => {
  const app = handler();

  it('answers a preflight 204 allowing any origin, POST, and both x402 proof headers', async () => {
    const res = await preflight(app, '/echo');
    expect(res.status).toBe(204);
    expect(accessControl(res)).toEqual({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'POST, GET, OPTIONS',
      'access-control-allow-headers': 'Content-Type, X-Payment, PAYMENT-SIGNATURE, SIGN-IN-WITH-X',
      'access-control-max-age': '600',
    });
    expect(await res.text()).toBe('');
  });

  it('lets pages read the 402 terms: PAYMENT-REQUIRED is exposed', async () => {
    const res = await post(app, '/echo', '{"text":"hi"}', PAGE);
    expect(res.status).toBe(402);
    expect(res.headers.get('PAYMENT-REQUIRED')).toBeString();
    expect(accessControl(res)).toEqual({ 'access-control-allow-origin': '*', 'access-control-expose-headers': CORS_EXPOSED_HEADERS });
    expect(CORS_EXPOSED_HEADERS.split(', ')).toEqual([
      'PAYMENT-REQUIRED',
      'PAYMENT-RESPONSE',
      'X-PAYMENT-RESPONSE',
      'X-Receipt',
      'X-Payment-Replayed',
      'X-Trial-Calls-Left',
      'X-Trial-Resets-At',
      'Retry-After',
      'X-Request-Id',
    ]);
  });

  it('puts the headers on every other answer too: health, 400, 404, 405, and a request without Origin', async () => {
    const answers = [
      await call(app, '/health', { origin: PAGE }),
      // A paid request's input is checked (400); without a payment the answer is the 402.
      await post(app, '/echo', '{"text":', PAGE, { 'X-Payment': 'e30=' }),
      await post(app, '/echo', '{}', PAGE, { 'X-Payment': 'e30=' }),
      await post(app, '/nope', '{}', PAGE),
      await call(app, '/echo', { method: 'PUT', origin: PAGE }),
      await post(app, '/echo', '{"text":"no origin"}'),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 400, 400, 404, 405, 402]);
    for (const res of answers) expect(res.headers.get('access-control-allow-origin')).toBe('*');
    for (const res of answers) expect(res.headers.get('access-control-expose-headers')).toBe(CORS_EXPOSED_HEADERS);
  });
});

describe('skill server CORS restricted to listed origins', () => {
  const app = handler({ origins: ['https://app.example', 'http://localhost:5173/'] });

  it('echoes a listed origin with Vary: Origin, on the preflight and on the answer', async () => {
    const pre = await preflight(app, '/echo', 'http://localhost:5173');
    expect(pre.status).toBe(204);
    expect(accessControl(pre)).toMatchObject({
      'access-control-allow-origin': 'http://localhost:5173',
      vary: 'Origin',
      'access-control-allow-headers': 'Content-Type, X-Payment, PAYMENT-SIGNATURE, SIGN-IN-WITH-X',
    });
    const res = await post(app, '/echo', '{"text":"hi"}', PAGE);
    expect(res.status).toBe(402);
    expect(accessControl(res)).toEqual({
      'access-control-allow-origin': PAGE,
      'access-control-expose-headers': CORS_EXPOSED_HEADERS,
      vary: 'Origin',
    });
  });

  it('gives any other origin no allow header, so its browser blocks the page', async () => {
    for (const origin of ['https://evil.example', 'https://app.example:8443', 'http://app.example', 'null']) {
      const pre = await preflight(app, '/echo', origin);
      expect(pre.status).toBe(204);
      expect(accessControl(pre)).toEqual({ vary: 'Origin' });
      const res = await post(app, '/echo', '{"text":"hi"}', origin);
      expect(res.status).toBe(402); // non-browser clients are not CORS's business
      expect(accessControl(res)).toEqual({ vary: 'Origin' });
    }
  });

  it('refuses origins that are not origins, at construction', () => {
    for (const origins of [[], ['app.example'], ['https://app.example/path'], ['ftp://app.example'], ['*'], [42]] as never[]) {
      expect(() => handler({ origins })).toThrow(ServeConfigError);
    }
    expect(() => handler({ origins: ['https://app.example/path'] })).toThrow('cors.origins: "https://app.example/path" is not an origin');
  });
});

describe('skill server CORS turned off', () => {
  const app = handler(false);

  it('sends no CORS header on preflights or answers', async () => {
    const pre = await preflight(app, '/echo');
    expect(pre.status).toBe(204);
    expect(accessControl(pre)).toEqual({});
    for (const res of [
      await post(app, '/echo', '{"text":"hi"}', PAGE),
      await post(app, '/boom', '{}', PAGE),
      await call(app, '/health', { origin: PAGE }),
    ]) {
      expect(accessControl(res)).toEqual({});
    }
  });
});
