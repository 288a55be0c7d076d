/**
 * The three sides paid in `tally` (tally.ts), over real HTTP on loopback ports and with no chain:
 * our facilitator (createFacilitator on an embedded database, tally its one scheme) and real serve()
 * skill servers that sell through tally besides their own schemes. The client is the test's
 * PaymentPipeline with `tallyScheme()` (tally-client.ts); `recordingPipelineFetch` shows what
 * it sent and heard.
 */
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { serve, type ServeOptions, type SkillServer, type Skills } from 'skill-market/creator';
import { toPaymentSigner, type PaymentSigner, type Skill } from 'skill-market/client';
import { parsePrice } from 'skill-market/x402';
import { createFacilitator } from '../../../src/facilitator';
import { createLogger } from '../../../src/log';
import { openTestDatabase } from '../database';
import { recordingLogger } from '../skill-server';
import { TALLY_ASSET, TALLY_NETWORK } from './tally';
import { tallyListing } from './tally-client';
import { tallyFacilitator, type TallyFacilitator } from './tally-facilitator';
import { tallySeller, type TallySeller, type TallySellerOptions } from './tally-server';

export interface TallyFacilitatorStack {
  url: string;
  /** The facilitator's tally: totals settled, calls, credit, hold and release. */
  tally: TallyFacilitator;
  close(): Promise<void>;
}

/** Our facilitator settling tally alone, on a fresh embedded database, listening on a loopback port. */
export async function startTallyFacilitator(): Promise<TallyFacilitatorStack> {
  const database = await openTestDatabase('embedded');
  const tally = tallyFacilitator();
  const facilitator = createFacilitator({
    database,
    logger: createLogger('error', () => {}),
    config: {
      network: TALLY_NETWORK,
      // Never dialled: no built-in scheme runs, and the facilitator is not started.
      rpcUrl: 'http://127.0.0.1:9',
      relayerPrivateKeys: [generatePrivateKey()],
      assets: [TALLY_ASSET],
    },
    schemes: [],
    extraSchemes: [tally],
  });
  facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
  return {
    url: `http://127.0.0.1:${facilitator.app.server!.port}`,
    tally,
    async close() {
      await facilitator.app.stop();
      await facilitator.stop();
      await database.close();
    },
  };
}

export interface TallySkillServer {
  server: SkillServer;
  seller: TallySeller;
  payTo: Address;
  /** The registry listing of skill `name` at `endpoint` (default the server's). */
  listing(name: string, endpoint?: string): Skill;
}

/**
 * A real serve() skill server on a loopback port selling `skills` in tally (and its own `exact`),
 * paid through the facilitator at `facilitatorUrl`; no registry, no channels, nothing tracked.
 */
export async function serveTally(
  skills: Skills,
  facilitatorUrl: string,
  options: Partial<ServeOptions> & TallySellerOptions = {},
): Promise<TallySkillServer> {
  const { pollMs, ...serveOptions } = options;
  const seller = tallySeller(pollMs === undefined ? {} : { pollMs });
  const payTo = privateKeyToAccount(generatePrivateKey()).address;
  const server = await serve(skills, {
    port: 0,
    hostname: '127.0.0.1',
    wallet: payTo,
    facilitatorUrl,
    network: TALLY_NETWORK,
    channels: false,
    trackCalls: false,
    logger: recordingLogger(),
    env: {},
    extraSchemes: [seller.scheme],
    ...serveOptions,
  });
  return {
    server,
    seller,
    payTo,
    listing: (name, endpoint = server.url) => ({ ...tallyListing(`${endpoint}/${name}`, payTo, parsePrice(skills[name]!.price)), name }),
  };
}

/** What a pipeline sent to a skill and heard back: each request's proof (null for none), the status (`error`: no answer) and headers. */
export interface Exchange {
  proof: string | null;
  status: number | 'error';
  headers?: Headers;
}

/** A fetch for `PaymentPipeline({ fetch })` that records each exchange. */
export function recordingPipelineFetch(): { fetch: typeof fetch; exchanges: Exchange[] } {
  const exchanges: Exchange[] = [];
  const recording = (async (input: string | URL | Request, init?: RequestInit) => {
    const proof = new Headers(init?.headers).get('PAYMENT-SIGNATURE');
    const record: Exchange = { proof, status: 'error' };
    exchanges.push(record);
    const response = await fetch(input, init);
    record.status = response.status;
    record.headers = response.headers;
    return response;
  }) as typeof fetch;
  return { fetch: recording, exchanges };
}

/** A payment signer of a new key whose signatures are counted. */
export function countingSigner(): PaymentSigner & { signatures: number } {
  const signer = toPaymentSigner(generatePrivateKey());
  const counted = { address: signer.address, signatures: 0, signTypedData: signer.signTypedData };
  counted.signTypedData = (typedData) => {
    counted.signatures++;
    return signer.signTypedData(typedData);
  };
  return counted;
}
