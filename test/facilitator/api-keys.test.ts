import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { loadFacilitatorConfig } from '../../src/config';
import { type LocalChain, startChain } from '../support/chain';
import { type FacilitatorFixture, paymentBody, requirementsFor, startFacilitatorFixture } from '../support/facilitator';

const KEY = 'facilitator-key-0123456789';

describe('facilitator API keys (FACILITATOR_API_KEYS)', () => {
  let chain: LocalChain;
  let f: FacilitatorFixture;
  beforeAll(async () => {
    chain = await startChain();
    f = await startFacilitatorFixture(chain, 'embedded', { config: { apiKeys: [KEY] } });
  }, 60_000);
  afterAll(async () => {
    await f.close();
    await chain.stop();
  });

  const send = (path: string, body: unknown, authorization?: string) =>
    f.facilitator.app.handle(
      new Request(`http://localhost${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify(body),
      }),
    );

  it('refuses /verify and /settle without a key (401) or with a wrong one, and spends nothing', async () => {
    const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, chain.accounts.payee.address));
    const before = await chain.balanceOf(chain.accounts.payee.address);
    const none = await send('/settle', body);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: string }).error).toBe('Authentication required');
    expect((await send('/verify', body, 'Bearer wrong-key-0123456789')).status).toBe(401);
    expect(await chain.balanceOf(chain.accounts.payee.address)).toBe(before);
  });

  it('serves a caller with a key, and leaves /supported open', async () => {
    const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, chain.accounts.payee.address));
    const res = await send('/verify', body, `Bearer ${KEY}`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { isValid: boolean }).isValid).toBe(true);
    expect((await f.get('/supported')).status).toBe(200);
  });

  it('reads keys from FACILITATOR_API_KEYS and refuses short ones', () => {
    const env = { FACILITATOR_PRIVATE_KEY: `0x${'11'.repeat(32)}` };
    expect(loadFacilitatorConfig({ ...env, FACILITATOR_API_KEYS: `${KEY}, another-key-0123456789` }, '/').apiKeys).toEqual([
      KEY,
      'another-key-0123456789',
    ]);
    expect(loadFacilitatorConfig(env, '/').apiKeys).toEqual([]);
    expect(() => loadFacilitatorConfig({ ...env, FACILITATOR_API_KEYS: 'short' }, '/')).toThrow('FACILITATOR_API_KEYS must be');
  });
});
