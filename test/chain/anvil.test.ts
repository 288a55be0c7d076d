import { afterAll, describe, expect, it } from 'bun:test';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type LocalChain, MULTICALL3_ADDRESS, randomNonce, signAuthorization, startChain, usdCoinAbi, vrsArgs } from '../support/chain';
import { lastReading } from '../support/eventually';

const started: LocalChain[] = [];
const start = async (options?: Parameters<typeof startChain>[0]) => {
  const chain = await startChain(options);
  started.push(chain);
  return chain;
};
afterAll(() => Promise.all(started.map((c) => c.stop())));

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Whether `pid` is gone, once it is (or after 3 s). */
async function gone(pid: number): Promise<boolean> {
  return !(await lastReading(
    () => isAlive(pid),
    (alive) => !alive,
    3_000,
  ));
}

/** Runs fixtures/orphan.ts in a separate Bun process; resolves with anvil's pid once printed. */
function runOrphan(mode: 'exit' | 'throw' | 'hang') {
  const script = fileURLToPath(new URL('./fixtures/orphan.ts', import.meta.url));
  const child = spawn(process.execPath, [script, mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  const anvilPid = new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const pid = /anvil-pid (\d+)/.exec(out)?.[1];
      if (pid) resolve(Number(pid));
    });
    child.on('exit', () => reject(new Error(`orphan.ts ended before starting a chain: ${out}`)));
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return { child, anvilPid, exited };
}

describe('startChain', () => {
  it('runs anvil on loopback with the requested chain id and CAIP-2 network', async () => {
    const chain = await start({ chainId: 8453 });
    expect(chain.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(chain.chainId).toBe(8453);
    expect(chain.network).toBe('eip155:8453');
    expect(await chain.publicClient.getChainId()).toBe(8453);
    expect(chain.domain).toEqual({ name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: chain.token.address });
  });

  it('generates distinct fresh accounts, each funded with ETH', async () => {
    const chain = await start();
    const { deployer, relayers, payers, payees } = chain.accounts;
    const all = [deployer, ...relayers, ...payers, ...payees, chain.smartWallet.owner];
    expect(new Set(all.map((a) => a.address)).size).toBe(all.length);
    expect(all.map((a) => a.address)).not.toContain('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'); // anvil's default
    for (const account of all) {
      expect(await chain.publicClient.getBalance({ address: account.address })).toBeGreaterThan(10n ** 18n);
    }
    expect(chain.accounts.payer).toBe(payers[0]!);
    expect(chain.accounts.payer.privateKey).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('keeps two chains in one file independent', async () => {
    const [a, b] = await Promise.all([start(), start({ chainId: 31337 })]);
    expect(a.rpcUrl).not.toBe(b.rpcUrl);
    expect(a.pid).not.toBe(b.pid);
    expect(a.token.address).not.toBe(b.token.address);

    await a.mint(a.accounts.payee.address, 7n);
    expect(await a.balanceOf(a.accounts.payee.address)).toBe(7n);
    expect(await b.balanceOf(a.accounts.payee.address)).toBe(0n);

    // An authorization signed for chain a's domain is worthless on chain b.
    const signed = await signAuthorization(a, b.accounts.payer, { to: b.accounts.payee.address, value: 1n });
    await expect(
      b.walletClient(b.accounts.relayer).writeContract({
        address: b.token.address,
        abi: usdCoinAbi,
        functionName: 'transferWithAuthorization',
        args: vrsArgs(signed),
      }),
    ).rejects.toThrow('FiatTokenV2: invalid signature');
  });

  it("serves Multicall3 at its canonical address, so viem's multicall works as on Base", async () => {
    const chain = await start();
    const token = { address: chain.token.address, abi: usdCoinAbi } as const;
    const results = await chain.publicClient.multicall({
      contracts: [
        { ...token, functionName: 'balanceOf', args: [chain.accounts.payer.address] },
        { ...token, functionName: 'authorizationState', args: [chain.accounts.payer.address, randomNonce()] },
      ],
      allowFailure: false,
    });
    expect(results).toEqual([1_000_000_000n, false]);
    expect(chain.chain.contracts?.multicall3?.address).toBe(MULTICALL3_ADDRESS);
  });

  it("holds transactions unmined while automine is off, so a receipt can be 'not yet observed'", async () => {
    const chain = await start();
    await chain.testClient.setAutomine(false);
    const hash = await chain.walletClient(chain.accounts.payer).sendTransaction({ to: chain.accounts.payee.address, value: 1n });
    await expect(chain.publicClient.getTransactionReceipt({ hash })).rejects.toThrow(/could not be found/);
    await chain.testClient.mine({ blocks: 1 });
    expect((await chain.publicClient.getTransactionReceipt({ hash })).status).toBe('success');
    await chain.testClient.setAutomine(true);
  });
});

describe('stopping a chain', () => {
  it('kills anvil so its pid is gone, and a second stop() is harmless', async () => {
    const chain = await start();
    expect(isAlive(chain.pid)).toBe(true);
    await chain.stop();
    expect(isAlive(chain.pid)).toBe(false);
    await chain.stop();
    const ping = fetch(chain.rpcUrl, { method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' });
    await expect(ping).rejects.toThrow();
  });

  for (const mode of ['exit', 'throw'] as const) {
    it(`happens by itself when a process ends by ${mode} without calling stop()`, async () => {
      const orphan = runOrphan(mode);
      const pid = await orphan.anvilPid;
      await orphan.exited;
      expect(await gone(pid)).toBe(true);
    });
  }

  it('happens by itself when a process is SIGKILLed (no exit hook runs)', async () => {
    const orphan = runOrphan('hang');
    const pid = await orphan.anvilPid;
    expect(isAlive(pid)).toBe(true);
    orphan.child.kill('SIGKILL');
    await orphan.exited;
    expect(await gone(pid)).toBe(process.platform !== 'win32');
  });
});
