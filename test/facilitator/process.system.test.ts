/**
 * `market facilitator` as a process: it migrates a fresh embedded database, answers /supported
 * with its signers and receiver authorizer, prints no key, and SIGTERM stops it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { type LocalChain, startChain } from '../support/chain';
import { freePort, spawnMarket, waitForJson } from '../support/process';

const work = mkdtempSync(join(tmpdir(), 'market-facilitator-process-'));
let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain();
}, 60_000);
afterAll(async () => {
  await chain.stop();
  rmSync(work, { recursive: true, force: true });
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
