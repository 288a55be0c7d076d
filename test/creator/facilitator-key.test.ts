import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { serve, skill } from 'skill-market/creator';
import { startChain, type LocalChain } from '../support/chain';
import { startFacilitatorFixture, type FacilitatorFixture } from '../support/facilitator';
import { balances, paidPost, loopbackServeOptions } from '../support/skill-server';

const KEY = 'skill-server-facilitator-key';

describe('a skill server paying through a facilitator that requires a key', () => {
  let chain: LocalChain;
  let facilitator: FacilitatorFixture;
  let facilitatorUrl: string;
  beforeAll(async () => {
    chain = await startChain({ payers: 2 });
    facilitator = await startFacilitatorFixture(chain, 'embedded', { config: { apiKeys: [KEY] } });
    facilitator.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
    facilitatorUrl = `http://127.0.0.1:${facilitator.facilitator.app.server!.port}`;
  }, 60_000);
  afterAll(async () => {
    await facilitator.facilitator.app.stop();
    await facilitator.close();
    await chain.stop();
  });

  const start = (facilitatorApiKey?: string) =>
    serve(
      { echo: skill({ price: '$0.001' }, (input: unknown) => input) },
      loopbackServeOptions(chain, facilitatorUrl, chain.accounts.payee.address, {
        asset: { address: chain.token.address, name: chain.token.name, version: chain.token.version, decimals: chain.token.decimals },
        ...(facilitatorApiKey ? { facilitatorApiKey } : {}),
      }),
    );

  it('sends facilitatorApiKey as a Bearer token and gets paid', async () => {
    const server = await start(KEY);
    try {
      const [before] = await balances(chain, chain.accounts.payee.address);
      const res = await paidPost(`${server.url}/echo`, { hi: 1 }, chain.accounts.payers[0]!);
      expect(res.status).toBe(200);
      const [after] = await balances(chain, chain.accounts.payee.address);
      expect(after - before).toBe(1000n);
    } finally {
      await server.stop();
    }
  });

  it('without the key the call is refused and nothing moves', async () => {
    const server = await start();
    try {
      const [before] = await balances(chain, chain.accounts.payee.address);
      const res = await paidPost(`${server.url}/echo`, { hi: 2 }, chain.accounts.payers[1]!);
      expect(res.status).not.toBe(200);
      const [after] = await balances(chain, chain.accounts.payee.address);
      expect(after).toBe(before);
    } finally {
      await server.stop();
    }
  });
});
