import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { Elysia } from 'elysia';
import { privateKeyToAccount } from 'viem/accounts';
import { deriveAuthorizerKey } from '../../src/config';
import { createFacilitator } from '../../src/facilitator';
import { createLogger } from '../../src/log';
import { type LocalChain, startChain } from '../support/chain';
import { oneDatabase } from '../support/database';
import { type FacilitatorFixture, memoryLogger, paymentBody, requirementsFor, startFacilitatorFixture } from '../support/facilitator';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain();
}, 60_000);
afterAll(() => chain.stop());

for (const kind of oneDatabase) {
  describe(`the facilitator's HTTP face (${kind} database)`, () => {
    let f: FacilitatorFixture;
    beforeAll(async () => {
      f = await startFacilitatorFixture(chain, kind);
    }, 60_000);
    afterAll(() => f.close());

    it('GET /supported lists the exact scheme on its network (v2, and v1 by name), batch-settlement with its receiver authorizer, upto with the relayer it settles from, and the relayer as signer', async () => {
      const res = await f.get('/supported');
      expect(res.status).toBe(200);
      const receiverAuthorizer = privateKeyToAccount(deriveAuthorizerKey(chain.accounts.relayer.privateKey)).address;
      expect(await res.json()).toEqual({
        kinds: [
          { x402Version: 2, scheme: 'exact', network: 'eip155:84532' },
          { x402Version: 1, scheme: 'exact', network: 'base-sepolia' },
          { x402Version: 2, scheme: 'batch-settlement', network: 'eip155:84532', extra: { receiverAuthorizer } },
          { x402Version: 2, scheme: 'upto', network: 'eip155:84532', extra: { facilitatorAddress: chain.accounts.relayer.address } },
        ],
        extensions: ['bazaar'],
        signers: { 'eip155:*': [chain.accounts.relayer.address] },
      });
    });

    it('answers 200 for valid and invalid payments alike, the verdict in the body', async () => {
      const good = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, chain.accounts.payee.address));
      const valid = await f.post('/verify', good);
      expect(valid.status).toBe(200);
      expect(await valid.json()).toEqual({ isValid: true, payer: chain.accounts.payer.address });
      const replay = await f.post('/verify', good);
      expect(replay.status).toBe(200);
      expect(await replay.json()).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used' });
      const settled = await f.post('/settle', good);
      expect(settled.status).toBe(200);
      expect(await settled.json()).toMatchObject({ success: true });
    });

    it('answers 400 for bodies that are not facilitator requests', async () => {
      const good = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, chain.accounts.payee.address));
      const broken = await f.facilitator.app.handle(
        new Request('http://localhost/verify', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"x402Version":',
        }),
      );
      expect(broken.status).toBe(400);
      expect(await broken.json()).toMatchObject({ code: 'MALFORMED_BODY' });
      // Each refusal names what is wrong with that body, so a facilitator refusing everything fails here.
      const cases: [unknown, string][] = [
        [{}, 'Malformed payment payload: /x402Version is missing'],
        [
          { x402Version: 2, paymentRequirements: good.paymentRequirements },
          'Malformed request: x402Version differs from paymentPayload.x402Version',
        ],
        [
          { ...good, paymentPayload: { ...good.paymentPayload, payload: { ...good.paymentPayload.payload, signature: 'zz' } } },
          "Malformed payment payload: /payload/signature Expected string to match '^0x(?:[0-9a-fA-F]{2})+$'",
        ],
        [
          { ...good, paymentRequirements: { ...good.paymentRequirements, amount: '-1' } },
          "Malformed payment requirements: /amount Expected string to match '^(?:0|[1-9][0-9]{0,77})$'",
        ],
        [{ ...good, x402Version: 1 }, 'Malformed request: x402Version differs from paymentPayload.x402Version'],
        [
          { ...good, paymentPayload: { ...good.paymentPayload, x402Version: 3 }, x402Version: 3 },
          'Malformed request: expected {x402Version: 1 | 2, paymentPayload: {…}, paymentRequirements: {…}}',
        ],
      ];
      for (const [body, error] of cases) {
        for (const path of ['/verify', '/settle']) {
          const res = await f.post(path, body);
          expect(res.status).toBe(400);
          expect(await res.json()).toMatchObject({ code: 'VALIDATION', error });
        }
      }
    });

    it('GET /receipts/:tx answers 404 for an unknown hash and 400 for something that is not a hash', async () => {
      expect((await f.get(`/receipts/0x${'12'.repeat(32)}`)).status).toBe(404);
      expect((await f.get('/receipts/0x1234')).status).toBe(400);
    });

    it('GET /health reports the database and the RPC', async () => {
      expect(await (await f.get('/health')).json()).toMatchObject({ status: 'ok', database: kind, rpc: { status: 'ok' } });
    });

    it('GET /health answers 503 when the RPC does not answer or serves another chain, naming no RPC URL', async () => {
      const health = async (rpcUrl: string, network: typeof chain.network) => {
        const other = createFacilitator({
          database: f.database,
          logger: createLogger('silent'),
          config: { network, rpcUrl, relayerPrivateKeys: [chain.accounts.relayers[0]!.privateKey], assets: [chain.token.address] },
        });
        const res = await other.app.handle(new Request('http://localhost/health'));
        return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
      };
      const down = await health('http://127.0.0.1:9/secret-key', chain.network);
      expect(down).toMatchObject({
        status: 503,
        retryAfter: expect.any(String),
        body: { status: 'unavailable', database: kind, rpc: { status: 'unavailable', error: 'the RPC did not answer' } },
      });
      expect(JSON.stringify(down.body)).not.toContain('secret-key');
      const wrong = await health(chain.rpcUrl, 'eip155:1');
      expect(wrong).toMatchObject({
        status: 503,
        body: { status: 'unavailable', rpc: { status: 'unavailable', error: expect.stringContaining('eip155:1') } },
      });
    });

    it('answers 503 when its RPC is down, logging no calldata or signature', async () => {
      const { logger, lines } = memoryLogger();
      const offline = createFacilitator({
        database: f.database,
        logger,
        config: {
          network: chain.network,
          rpcUrl: 'http://127.0.0.1:9/',
          relayerPrivateKeys: [chain.accounts.relayers[0]!.privateKey],
          assets: [chain.token.address],
        },
      });
      const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, chain.accounts.payee.address));
      const res = await offline.app.handle(
        new Request('http://localhost/verify', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      );
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ code: 'UNAVAILABLE' });
      const log = lines.join('\n');
      expect(log).toContain('chain request failed');
      expect(log).not.toContain(body.paymentPayload.payload.signature.slice(2, 40));
    });

    it('mounts inside another Elysia app under a prefix', async () => {
      const mounted = createFacilitator({
        database: f.database,
        publicClient: chain.publicClient,
        logger: createLogger('silent'),
        prefix: '/facilitator',
        config: {
          network: chain.network,
          rpcUrl: chain.rpcUrl,
          relayerPrivateKeys: [chain.accounts.relayers[0]!.privateKey],
          assets: [chain.token.address],
        },
      });
      const host = new Elysia().get('/', () => 'host').use(mounted.app);
      const res = await host.handle(new Request('http://localhost/facilitator/supported'));
      expect(res.status).toBe(200);
      expect(((await res.json()) as { kinds: unknown[] }).kinds).toHaveLength(4);
      expect(await (await host.handle(new Request('http://localhost/'))).text()).toBe('host');
    });
  });
}
