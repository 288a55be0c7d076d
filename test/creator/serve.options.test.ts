/**
 * serve() options: the spec's errors (no skills, no wallet), wallet / API key / URL resolution
 * order with the SKILLZ_* fallbacks, and starting while the facilitator and registry are down.
 */
import { describe, expect, it } from 'bun:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ServeConfigError, serve, skill, type ServeOptions } from '../../sdk/creator/index';
import { resolveApiKey, resolveApiUrl, resolveWallet } from '../../sdk/creator/settings';
import { eventually } from '../support/eventually';
import { freePort } from '../support/process';
import { recordingLogger } from '../support/skill-server';

const echo = skill({ price: '$0.001', description: 'Echoes its input' }, (input) => ({ echo: input }));
const address = () => privateKeyToAccount(generatePrivateKey()).address;

async function started(skills: Parameters<typeof serve>[0], options: ServeOptions) {
  const logger = recordingLogger();
  const deadPort = await freePort();
  const server = await serve(skills, {
    port: 0,
    hostname: '127.0.0.1',
    facilitatorUrl: `http://127.0.0.1:${deadPort}`,
    trackCalls: false,
    logger,
    ...options,
  });
  return { server, logger };
}

describe('serve() errors as documented', () => {
  it('throws "no skills provided" for an empty skills map', async () => {
    await expect(serve({}, { wallet: address(), env: {} })).rejects.toThrow('no skills provided');
    await expect(serve(undefined as never, { wallet: address(), env: {} })).rejects.toThrow(ServeConfigError);
  });

  it('throws "wallet not found" with neither the wallet option nor a wallet variable', async () => {
    await expect(serve({ echo }, { env: { MARKET_API_KEY: 'sk_x', MARKET_WALLET_ADDRESS: '  ' } })).rejects.toThrow('wallet not found');
  });

  it('refuses a wallet that is neither a 42-char address nor a 66-char key, without echoing it', async () => {
    const secretish = `0x${'ab'.repeat(30)}`;
    const error = await serve({ echo }, { env: { MARKET_WALLET_KEY: secretish } }).catch((e: Error) => e);
    expect((error as Error).message).toContain('MARKET_WALLET_KEY must be a 42-character 0x address or a 66-character 0x private key');
    expect((error as Error).message).not.toContain(secretish.slice(2, 20));
    expect(() => resolveWallet(`0x${'0'.repeat(64)}`, {})).toThrow('not a valid secp256k1 private key');
    const mixed = address();
    const badChecksum = `0x${mixed.slice(2, 41)}${mixed[41] === 'a' ? 'A' : mixed[41] === 'A' ? 'a' : mixed[41] === 'b' ? 'B' : 'b'}`;
    if (badChecksum.toLowerCase() === mixed.toLowerCase()) expect(() => resolveWallet(badChecksum, {})).toThrow('invalid EIP-55 checksum');
  });

  it('refuses bad skill names, non-skills and a bad port', async () => {
    const wallet = address();
    await expect(serve({ 'bad name': echo }, { wallet, env: {} })).rejects.toThrow('must be 1-64 letters');
    await expect(serve({ health: echo }, { wallet, env: {} })).rejects.toThrow('reserved');
    await expect(serve({ echo: { price: '$0.01' } as never }, { wallet, env: {} })).rejects.toThrow('is not a skill');
    await expect(serve({ echo }, { wallet, env: {}, port: 70_000 })).rejects.toThrow('port must be');
    await expect(serve({ echo }, { wallet, env: {}, network: 'eip155:31337' })).rejects.toThrow('No built-in USDC on eip155:31337');
  });

  it('refuses an unknown settlement mode, a cap that is not a price and a first check that is not a whole number of ms', async () => {
    const wallet = address();
    await expect(serve({ echo }, { wallet, env: {}, settlement: 'later' as never })).rejects.toThrow(
      'settlement mode must be one of confirmed, broadcast',
    );
    await expect(serve({ echo }, { wallet, env: {}, settlement: { maxUnconfirmedPerPayer: 'lots' } })).rejects.toThrow(
      'settlement.maxUnconfirmedPerPayer',
    );
    for (const firstCheckMs of [0, 2.5])
      await expect(serve({ echo }, { wallet, env: {}, settlement: { firstCheckMs } })).rejects.toThrow(
        'settlement.firstCheckMs must be a whole number of ms above 0',
      );
  });

  it('refuses a holdMs that is not a whole number of ms from 0 to 120 000', async () => {
    const wallet = address();
    for (const holdMs of [-1, 1.5, 120_001, Number.NaN]) {
      await expect(serve({ echo }, { wallet, env: {}, holdMs })).rejects.toThrow('holdMs must be a whole number of milliseconds');
    }
  });
});

describe('serve() resolution order', () => {
  it('takes the wallet from the option, then MARKET_WALLET_ADDRESS, MARKET_WALLET_KEY, SKILLZ_WALLET_ADDRESS, SKILLZ_WALLET_KEY', () => {
    const [a, b, c] = [address(), address(), address()];
    const keyM = generatePrivateKey();
    const keyS = generatePrivateKey();
    const all = { MARKET_WALLET_ADDRESS: b, MARKET_WALLET_KEY: keyM, SKILLZ_WALLET_ADDRESS: c, SKILLZ_WALLET_KEY: keyS };
    expect(resolveWallet(a, all)).toEqual({ address: a, source: 'the wallet option' });
    expect(resolveWallet(undefined, all).address).toBe(b);
    expect(resolveWallet(undefined, { ...all, MARKET_WALLET_ADDRESS: '' })).toEqual({
      address: privateKeyToAccount(keyM).address,
      source: 'MARKET_WALLET_KEY',
    });
    expect(resolveWallet(undefined, { SKILLZ_WALLET_ADDRESS: c, SKILLZ_WALLET_KEY: keyS }).address).toBe(c);
    expect(resolveWallet(undefined, { SKILLZ_WALLET_KEY: keyS }).address).toBe(privateKeyToAccount(keyS).address);
    expect(resolveWallet(a.toLowerCase(), {}).address).toBe(a); // checksummed
  });

  it('takes the API key and the registry URL from the option, then MARKET_*, then SKILLZ_*', () => {
    expect(resolveApiKey('sk_opt', { MARKET_API_KEY: 'sk_m', SKILLZ_API_KEY: 'sk_s' })).toBe('sk_opt');
    expect(resolveApiKey(undefined, { MARKET_API_KEY: 'sk_m', SKILLZ_API_KEY: 'sk_s' })).toBe('sk_m');
    expect(resolveApiKey(undefined, { SKILLZ_API_KEY: 'sk_s' })).toBe('sk_s');
    expect(resolveApiKey(undefined, {})).toBeUndefined();
    expect(resolveApiUrl(undefined, { MARKET_API_URL: 'http://m.test/', SKILLZ_API_URL: 'http://s.test' }, 'http://d.test')).toBe(
      'http://m.test',
    );
    expect(resolveApiUrl(undefined, { SKILLZ_API_URL: 'http://s.test' }, 'http://d.test')).toBe('http://s.test');
    expect(resolveApiUrl(undefined, {}, 'http://d.test')).toBe('http://d.test');
    expect(() => resolveApiUrl('ftp://x', {}, 'http://d.test')).toThrow('apiUrl must be an absolute http(s) URL');
  });

  it('pays to the wallet derived from MARKET_WALLET_KEY when no option is given', async () => {
    const key = generatePrivateKey();
    const { server } = await started({ echo }, { env: { MARKET_WALLET_KEY: key } });
    try {
      expect(server.payTo).toBe(privateKeyToAccount(key).address);
      const res = await fetch(`${server.url.replace('localhost', '127.0.0.1')}/echo`, { method: 'POST', body: '{}' });
      expect(res.status).toBe(402);
      expect(((await res.json()) as { accepts: { payTo: string } }).accepts.payTo).toBe(privateKeyToAccount(key).address);
    } finally {
      await server.stop();
    }
  });
});

describe('serve() start-up', () => {
  it('starts with warnings when neither the facilitator nor the registry can be reached, and lists prices', async () => {
    const deadRegistry = `http://127.0.0.1:${await freePort()}`;
    const { server, logger } = await started(
      { echo, other: skill({ price: '$1.5', groups: ['g'] }, () => 1) },
      {
        wallet: address(),
        env: { MARKET_API_KEY: 'sk_test', MARKET_API_URL: deadRegistry },
        register: { endpoint: 'https://skills.example', groups: ['tools'] },
      },
    );
    try {
      expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
      const health = await fetch(`${server.url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok', skills: ['echo', 'other'] });
      expect(server.registration.map((r) => r.success)).toEqual([false, false]);
      expect(server.registration[0]!.error).toContain('could not be reached');
      expect(logger.has('warn', 'the facilitator cannot be reached')).toBe(true);
      expect(logger.has('warn', 'registration of "echo" failed')).toBe(true);
      expect(logger.has('info', 'POST /echo  0.001 USDC  Echoes its input')).toBe(true);
      expect(logger.has('info', 'POST /other  1.5 USDC')).toBe(true);
    } finally {
      await server.stop();
    }
  });

  it('asks a facilitator that could not be reached again after facilitatorRetryMs, and never after stop(), even with a question under way', async () => {
    const retryMs = 50;
    let asked = 0;
    let release: (() => void) | undefined;
    const facilitator = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(request) {
        if (new URL(request.url).pathname !== '/supported') return new Response('not here', { status: 404 });
        asked += 1;
        // The first question fails at once; the retry is held until the server has stopped.
        if (asked === 2) await new Promise<void>((resolve) => (release = resolve));
        return Response.json({ error: 'starting' }, { status: 503 });
      },
    });
    // A running server asking another facilitator the same way: by the time it has asked twice
    // after its start, the stopped server would have asked again had it kept its timer.
    let askedRunning = 0;
    const other = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch(request) {
        if (new URL(request.url).pathname !== '/supported') return new Response('not here', { status: 404 });
        askedRunning += 1;
        return Response.json({ error: 'starting' }, { status: 503 });
      },
    });
    try {
      const { server } = await started(
        { echo },
        { wallet: address(), env: {}, facilitatorUrl: facilitator.url.origin, facilitatorRetryMs: retryMs },
      );
      expect(asked).toBe(1);
      await eventually(() => release, Boolean, 'the retry after facilitatorRetryMs');
      await server.stop();
      release!();
      const running = await started(
        { echo },
        { wallet: address(), env: {}, facilitatorUrl: other.url.origin, facilitatorRetryMs: retryMs },
      );
      try {
        await eventually(
          () => askedRunning,
          (n) => n >= 3,
          'a running server asking twice more',
        );
      } finally {
        await running.server.stop();
      }
      expect(asked).toBe(2);
    } finally {
      release?.();
      facilitator.stop(true);
      other.stop(true);
    }
  });

  it('refuses a facilitatorRetryMs that is not a whole number of ms above 0', async () => {
    for (const facilitatorRetryMs of [0, -1, 1.5])
      await expect(serve({ echo }, { wallet: address(), env: {}, facilitatorRetryMs })).rejects.toThrow(
        'facilitatorRetryMs must be a whole number of ms above 0',
      );
  });

  it('rejects and stops listening when registration fails with onError "throw"; "silent" says nothing', async () => {
    const port = await freePort();
    const deadRegistry = `http://127.0.0.1:${await freePort()}`;
    const options = { wallet: address(), env: { MARKET_API_KEY: 'sk_test' }, apiUrl: deadRegistry, port } as const;
    await expect(
      started({ echo }, { ...options, register: { endpoint: 'https://s.example', groups: ['g'], onError: 'throw' } }),
    ).rejects.toThrow('registration failed for "echo"');
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    const { server, logger } = await started(
      { echo },
      { ...options, register: { endpoint: 'https://s.example', groups: ['g'], onError: 'silent' } },
    );
    expect(server.registration[0]!.success).toBe(false);
    expect(logger.lines.some((l) => l.includes('registration'))).toBe(false);
    await server.stop();
    await server.stop(); // idempotent
  });

  it('rejects with a clear message when the port is taken', async () => {
    const { server } = await started({ echo }, { wallet: address(), env: {} });
    try {
      await expect(started({ echo }, { wallet: address(), env: {}, port: server.port })).rejects.toThrow(
        `cannot listen on 127.0.0.1:${server.port}`,
      );
    } finally {
      await server.stop();
    }
  });

  it('does not register when register.enabled is false, and reports a missing API key as a failure', async () => {
    const { server } = await started({ echo }, { wallet: address(), env: {}, register: { endpoint: 'https://s.example', enabled: false } });
    expect(server.registration).toEqual([]);
    await server.stop();
    const second = await started({ echo }, { wallet: address(), env: {}, register: { endpoint: 'https://s.example', groups: ['g'] } });
    expect(second.server.registration).toEqual([{ name: 'echo', success: false, error: 'no API key: pass apiKey or set MARKET_API_KEY' }]);
    await second.server.stop();
  });
});
