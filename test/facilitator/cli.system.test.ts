import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { type LocalChain, startChain } from '../support/chain';
import { freePort, spawnMarket, waitForJson } from '../support/process';

const work = mkdtempSync(join(tmpdir(), 'market-facilitator-cli-'));
let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain();
}, 60_000);
afterAll(async () => {
  await chain.stop();
  rmSync(work, { recursive: true, force: true });
});

async function run(args: string[], env: Record<string, string> = {}) {
  const child = spawnMarket(['facilitator', ...args], { MARKET_DATA_DIR: join(work, 'unused'), ...env }, work);
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code, stdout, stderr };
}

describe('market facilitator configuration errors', () => {
  it('exits 1 naming FACILITATOR_PRIVATE_KEY when it is missing', async () => {
    const { code, stderr } = await run([]);
    expect(code).toBe(1);
    expect(stderr).toContain('FACILITATOR_PRIVATE_KEY is required');
  });

  it('exits 1 naming FACILITATOR_PRIVATE_KEY for a malformed or unusable key, without printing it', async () => {
    for (const key of ['0xnot-a-key-but-quite-secret', `0x${'0'.repeat(64)}`, `${chain.accounts.relayer.privateKey},0x1234`]) {
      const { code, stderr } = await run([], { FACILITATOR_PRIVATE_KEY: key });
      expect(code).toBe(1);
      expect(stderr).toContain('FACILITATOR_PRIVATE_KEY must be a 0x-prefixed 64-hex secp256k1 private key');
      expect(stderr).not.toContain(key.slice(2, 20));
    }
  });

  it('exits 1 naming the variable for a bad network, a network without default RPC, a bad asset list or port', async () => {
    const key = { FACILITATOR_PRIVATE_KEY: chain.accounts.relayer.privateKey };
    expect((await run(['--network', 'base-mainnet'], key)).stderr).toContain('FACILITATOR_NETWORK must be a CAIP-2 network');
    expect((await run(['--network', 'eip155:31337'], key)).stderr).toContain('FACILITATOR_RPC_URL is required for eip155:31337');
    expect((await run([], { ...key, FACILITATOR_ASSETS: 'usdc' })).stderr).toContain(
      'FACILITATOR_ASSETS must be comma-separated token addresses',
    );
    const port = await run(['--port', 'abc'], key);
    expect(port.code).toBe(1);
    expect(port.stderr).toContain('PORT must be a port number');
  });

  it('exits 1 naming FACILITATOR_RPC_URL when the RPC serves another chain than the network', async () => {
    const { code, stderr } = await run(['--rpc', chain.rpcUrl, '--network', 'eip155:8453', '--port', String(await freePort())], {
      FACILITATOR_PRIVATE_KEY: chain.accounts.relayer.privateKey,
      MARKET_DATA_DIR: join(work, 'wrong-chain'),
    });
    expect(code).toBe(1);
    expect(stderr).toContain('FACILITATOR_RPC_URL serves chain 84532, but the facilitator settles on eip155:8453');
  });
});

describe('market facilitator process', () => {
  it('starts on the embedded database, answers /supported (batch-settlement with the FACILITATOR_AUTHORIZER_KEY address), and stops on SIGTERM', async () => {
    const port = await freePort();
    const authorizerKey = generatePrivateKey();
    const child = spawnMarket(
      ['facilitator', '--port', String(port), '--host', '127.0.0.1', '--rpc', chain.rpcUrl, '--network', chain.network],
      {
        FACILITATOR_PRIVATE_KEY: chain.accounts.relayer.privateKey,
        FACILITATOR_AUTHORIZER_KEY: authorizerKey,
        FACILITATOR_ASSETS: chain.token.address,
        MARKET_DATA_DIR: join(work, 'data'),
      },
      work,
    );
    try {
      // A fresh embedded database migrates first: slow on a loaded machine.
      expect(await waitForJson(`http://127.0.0.1:${port}/supported`, 90_000)).toEqual({
        kinds: [
          { x402Version: 2, scheme: 'exact', network: chain.network },
          { x402Version: 1, scheme: 'exact', network: 'base-sepolia' },
          {
            x402Version: 2,
            scheme: 'batch-settlement',
            network: chain.network,
            extra: { receiverAuthorizer: privateKeyToAccount(authorizerKey).address },
          },
          { x402Version: 2, scheme: 'upto', network: chain.network, extra: { facilitatorAddress: chain.accounts.relayer.address } },
        ],
        extensions: ['bazaar'],
        signers: { 'eip155:*': [chain.accounts.relayer.address] },
      });
      child.kill('SIGTERM');
      expect(await child.exited).toBe(0);
      const output = (await new Response(child.stdout).text()) + (await new Response(child.stderr).text());
      expect(output).not.toContain(chain.accounts.relayer.privateKey.slice(2));
      expect(output).not.toContain(authorizerKey.slice(2));
    } finally {
      child.kill('SIGKILL');
    }
  }, 120_000);
});
