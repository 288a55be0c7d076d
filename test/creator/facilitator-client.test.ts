/**
 * The skill server's facilitator client goes through the SDK's HTTP core: it follows no redirect
 * and reads no unbounded answer. A real local HTTP server plays the facilitator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { FacilitatorUnavailableError } from '../../sdk/creator/errors';
import { createFacilitatorClient } from '../../sdk/creator/facilitator-client';
import { MarketError } from '../../sdk/http/errors';

const SUPPORTED = { kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:84532' }], extensions: [], signers: {} };

describe('facilitator client', () => {
  let server: ReturnType<typeof Bun.serve>;
  let url: string;

  beforeAll(() => {
    server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch(request) {
        const path = new URL(request.url).pathname;
        if (path === '/redirect/supported') return new Response(null, { status: 302, headers: { location: `${url}/supported` } });
        if (path === '/supported') return Response.json(SUPPORTED);
        if (path === '/huge/supported') return Response.json({ ...SUPPORTED, padding: 'x'.repeat(5 * 1024 * 1024) });
        return new Response('not found', { status: 404 });
      },
    });
    url = `http://127.0.0.1:${server.port}`;
  });
  afterAll(() => server.stop(true));

  it('reads the supported kinds of a facilitator that answers plainly', async () => {
    const kinds = await createFacilitatorClient({ url }).supported(30_000);
    expect(kinds.map((k) => k.network)).toEqual(['eip155:84532']);
  });

  it('refuses a facilitator answering a redirect with a facilitator_unavailable MarketError naming it', async () => {
    const error = await createFacilitatorClient({ url: `${url}/redirect` })
      .supported(30_000)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(FacilitatorUnavailableError);
    expect(error).toBeInstanceOf(MarketError);
    expect((error as MarketError).code).toBe('facilitator_unavailable');
    expect((error as Error).message).toMatch(/redirect/i);
    expect((error as Error).message).toContain(`${url}/redirect/supported`);
  });

  it('refuses a facilitator answering more than the SDK reads with a facilitator_unavailable MarketError', async () => {
    const error = await createFacilitatorClient({ url: `${url}/huge` })
      .supported(30_000)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(FacilitatorUnavailableError);
    expect((error as MarketError).code).toBe('facilitator_unavailable');
    expect((error as Error).message).toContain(`${url}/huge/supported`);
    expect((error as Error).message).toMatch(/larger than \d+ bytes/);
  });
});
