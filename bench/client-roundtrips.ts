/**
 * Paid calls through the consumer client, standard mode (402 first: two round trips) against
 * fast mode (proof with the first request: one round trip). Everything local: anvil with our
 * EIP-3009 token, our facilitator over HTTP, the registry in process on a port, the test skill
 * server (sdk/x402 + facilitator /verify and /settle).
 *
 *   npx bun bench/client-roundtrips.ts [calls per mode, default 200] [concurrency, default 1]
 */
import { SkillMarket, type PaymentMode } from 'skill-market';
import { authTestConfig, createKey, providerKeys, walletSignIn } from '../test/support/auth';
import { newCreator } from '../test/support/catalogue';
import { startChain } from '../test/support/chain';
import { openTestDatabase } from '../test/support/database';
import { startFacilitatorFixture } from '../test/support/facilitator';
import { registryWith } from '../test/support/registry';
import { startSkillServer } from '../test/client/support/skill-server';

const CALLS = Number(process.argv[2] ?? 200);
const CONCURRENCY = Number(process.argv[3] ?? 1);
const PRICE = 1_000n; // $0.001

const chain = await startChain({ payers: 1, relayers: 4, usdcPerPayer: 10_000_000_000n });
const database = await openTestDatabase('embedded');
const facilitator = await startFacilitatorFixture(chain, 'embedded', { relayers: chain.accounts.relayers, database });
facilitator.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
const facilitatorUrl = `http://127.0.0.1:${facilitator.facilitator.app.server!.port}`;
const registry = registryWith(
  database,
  authTestConfig((await providerKeys()).publicKeyPem, {
    catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 },
  }),
);
const registryServer = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (r) => registry.app.handle(r) });
const apiUrl = `http://127.0.0.1:${registryServer.port}`;
const server = await startSkillServer(facilitatorUrl);

const creator = await newCreator(registry.request);
const payee = await chain.createAccount();
await creator.prove(payee);
const payTo = payee.address;
const asset = { address: chain.token.address, name: chain.token.name, version: chain.token.version, decimals: chain.token.decimals };
server.skills.set('echo', { price: PRICE, payTo, network: chain.network, asset, handler: (input) => input });
const registered = await creator.register({
  name: 'echo',
  endpoint: server.url,
  price: '$0.001',
  paymentAddress: payTo,
  network: chain.network,
});
const { slug } = (await registered.json()) as { slug: string };
const consumer = await walletSignIn(registry.request);
const apiKey = (await createKey(registry.request, consumer.token, 'consumer')).key;

function client(mode: PaymentMode, withUsage: boolean): SkillMarket {
  return new SkillMarket({
    apiUrl,
    wallet: chain.accounts.payer,
    network: chain.network,
    assets: [{ network: chain.network, ...asset }],
    mode,
    ...(withUsage ? { apiKey } : {}),
  });
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function measure(mode: PaymentMode, withUsage: boolean) {
  const market = client(mode, withUsage);
  for (let i = 0; i < 10; i++) await market.call(slug, { warm: i }); // listing cached, connections open, JIT warm
  const payeeBefore = await chain.balanceOf(payTo);
  const requestsBefore = server.requests.length;
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CALLS) {
        next++;
        const t = performance.now();
        await market.call(slug, { n: next });
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await market.flush();
  const moved = (await chain.balanceOf(payTo)) - payeeBefore;
  if (moved !== BigInt(CALLS) * PRICE) throw new Error(`${mode}: ${moved} moved for ${CALLS} calls`);
  latencies.sort((a, b) => a - b);
  return {
    mode: `${mode}${withUsage ? ' + usage' : ''}`,
    'calls/s': (CALLS / seconds).toFixed(1),
    'p50 ms': percentile(latencies, 50).toFixed(1),
    'p95 ms': percentile(latencies, 95).toFixed(1),
    'HTTP requests/call': ((server.requests.length - requestsBefore) / CALLS).toFixed(2),
  };
}

try {
  console.log(
    `${CALLS} paid calls per mode, concurrency ${CONCURRENCY}, ${process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.versions.node}`}`,
  );
  const rows = [];
  for (const [mode, usage] of [
    ['standard', false],
    ['fast', false],
    ['fast', true],
  ] as const)
    rows.push(await measure(mode, usage));
  console.table(rows);
} finally {
  await server.close();
  await registryServer.stop(true);
  await facilitator.facilitator.app.stop();
  await facilitator.close();
  await database.close();
  await chain.stop();
}
