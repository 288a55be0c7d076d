import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { createServer, type Server, type Socket } from 'node:net';
import type { DatabaseHandle } from '../../src/db';
import { newWallet, walletSignIn } from '../support/auth';
import { startChain, type LocalChain } from '../support/chain';
import { oneDatabase, openTestDatabase } from '../support/database';
import { manualClock, registryWith } from '../support/registry';
import { offlineChain, walletCalls, walletTestConfig } from './helpers';

/** An HTTP proxy in front of the chain's RPC that counts the JSON-RPC requests it forwards. */
function countingRpc(target: string) {
  let calls = 0;
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      calls++;
      const res = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: await req.text() });
      return new Response(await res.text(), { status: res.status, headers: { 'content-type': 'application/json' } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/`, calls: () => calls, stop: () => server.stop(true) };
}

/** A TCP server that accepts connections and never answers: an RPC that hangs. */
async function silentServer(): Promise<{ url: string; close(): void }> {
  const sockets: Socket[] = [];
  const server: Server = createServer((socket) => void sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

for (const kind of oneDatabase) {
  describe(`live wallet balance on ${kind}`, () => {
    let database: DatabaseHandle;
    let chain: LocalChain;
    let rpc: ReturnType<typeof countingRpc>;
    beforeAll(async () => {
      [database, chain] = await Promise.all([openTestDatabase(kind), startChain({ payers: 1, payees: 1 })]);
      rpc = countingRpc(chain.rpcUrl);
    }, 60_000);
    afterAll(async () => {
      rpc.stop();
      await chain.stop();
      await database.close();
    });

    const localChain = () =>
      offlineChain({ network: chain.network, usdcAddress: chain.token.address, rpcUrl: rpc.url, balanceCacheMs: 5000 });

    it('answers any address’s token balance publicly (GET /balances/:address), 400 for a bad address, null and why when the chain cannot be read', async () => {
      const registry = registryWith(database, await walletTestConfig(localChain()));
      const holder = chain.accounts.payers[0]!.address;
      const res = await registry.request(`/balances/${holder.toLowerCase()}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        address: holder,
        network: chain.network,
        asset: chain.token.address,
        balanceAtomic: (await chain.balanceOf(holder)).toString(),
      });
      expect((await registry.request('/balances/0x1234')).status).toBe(400);
      const offline = registryWith(database, await walletTestConfig(offlineChain({ rpcUrl: 'http://127.0.0.1:9/' })));
      const down = await offline.request(`/balances/${holder}`);
      expect(down.status).toBe(200);
      expect(await down.json()).toMatchObject({ address: holder, balanceAtomic: null, balanceError: expect.any(String) });
    });

    it('reads the USDC balance of the active wallet from the chain, exact to 6 decimals', async () => {
      const registry = registryWith(database, await walletTestConfig(localChain()));
      const api = walletCalls(registry.request, (await walletSignIn(registry.request)).token);
      const funded = await chain.createAccount({ usdc: 12_345_678n });
      await chain.mint(funded.address, 500_000n);
      await api.register(funded.address, 'funded');
      const res = await api.active();
      expect(res.status).toBe(200);
      const onChain = await chain.balanceOf(funded.address);
      expect(onChain).toBe(12_845_678n);
      expect(res.body).toMatchObject({
        address: funded.address,
        network: chain.network,
        asset: chain.token.address,
        balance: '12.845678',
        balanceAtomic: onChain.toString(),
      });
      expect(res.body.balanceError).toBeUndefined();
      expect(typeof res.body.balanceCheckedAt).toBe('string');
    });

    it('shows whole amounts and zero with all six decimals', async () => {
      const registry = registryWith(database, await walletTestConfig(localChain()));
      const api = walletCalls(registry.request, (await walletSignIn(registry.request)).token);
      const empty = newWallet().address;
      await api.register(empty);
      expect((await api.active()).body).toMatchObject({ balance: '0.000000', balanceAtomic: '0' });
      const rich = await chain.createAccount({ usdc: 10_000_000n });
      await api.register(rich.address);
      expect((await api.active()).body.balance).toBe('10.000000');
    });

    it('reads one of your wallets by address, revoked ones too, with its live balance', async () => {
      const registry = registryWith(database, await walletTestConfig(localChain()));
      const api = walletCalls(registry.request, (await walletSignIn(registry.request)).token);
      const first = await chain.createAccount({ usdc: 2_500_001n });
      const second = await chain.createAccount({ usdc: 7_000_000n });
      await api.register(first.address, 'first');
      await api.register(second.address);
      await api.revoke(first.address);

      const revoked = await api.one(first.address.toLowerCase());
      expect(revoked.status).toBe(200);
      expect(revoked.body).toMatchObject({
        address: first.address,
        label: 'first',
        isActive: false,
        balance: '2.500001',
        balanceAtomic: '2500001',
        network: chain.network,
      });
      expect(revoked.body.revokedAt).toBeString();
      const listed = (await api.all()).body.find((w: any) => w.address === first.address);
      expect(revoked.body).toMatchObject(listed);

      const active = await api.one(second.address);
      expect(active.body).toMatchObject({ address: second.address, isActive: true, revokedAt: null, balance: '7.000000' });
      expect(active.body).toEqual((await api.active()).body);
    });

    it('answers 404 Wallet not found for another user’s wallet and for an address that is not yours', async () => {
      const registry = registryWith(database, await walletTestConfig(localChain()));
      const owner = walletCalls(registry.request, (await walletSignIn(registry.request)).token);
      const stranger = walletCalls(registry.request, (await walletSignIn(registry.request)).token);
      const address = newWallet().address;
      await owner.register(address);
      for (const res of [await stranger.one(address), await stranger.one(newWallet().address), await owner.one('0x1234')]) {
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ error: 'Wallet not found', code: 'NOT_FOUND' });
      }
      expect((await owner.one(address)).status).toBe(200);
    });

    it('answers a burst of requests with one RPC call, and reads again once the cache window has passed', async () => {
      const clock = manualClock();
      const registry = registryWith(database, await walletTestConfig(localChain()), clock);
      const api = walletCalls(registry.request, (await walletSignIn(registry.request)).token);
      const account = await chain.createAccount({ usdc: 1_000_000n });
      await api.register(account.address);
      const before = rpc.calls();
      const burst = await Promise.all(Array.from({ length: 10 }, () => api.active()));
      expect(burst.every((r) => r.body.balance === '1.000000')).toBe(true);
      clock.advance(4);
      expect((await api.active()).body.balance).toBe('1.000000');
      expect(rpc.calls() - before).toBe(1);

      await chain.mint(account.address, 1_000_000n);
      clock.advance(2);
      expect((await api.active()).body.balance).toBe('2.000000');
      expect(rpc.calls() - before).toBe(2);
    });

    it('gives the record with balance null and a reason when the RPC has stopped, without failing', async () => {
      const other = await startChain({ payers: 1, payees: 1 });
      const clock = manualClock();
      const config = await walletTestConfig(
        offlineChain({ network: other.network, usdcAddress: other.token.address, rpcUrl: other.rpcUrl }),
      );
      const registry = registryWith(database, config, clock);
      const api = walletCalls(registry.request, (await walletSignIn(registry.request)).token);
      const address = other.accounts.payer.address;
      await api.register(address, 'payer');
      expect((await api.active()).body.balance).toBe('1000.000000');

      await other.stop();
      clock.advance(10);
      const res = await api.active();
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        address,
        label: 'payer',
        balance: null,
        balanceAtomic: null,
        balanceCheckedAt: null,
        balanceError: 'The RPC could not be reached',
      });
      expect(res.text).not.toContain(other.rpcUrl.replace('http://', ''));
      expect((await api.all()).status).toBe(200);
      const one = await api.one(address);
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ address, balance: null, balanceAtomic: null, balanceError: 'The RPC could not be reached' });
    }, 60_000);

    it('stops waiting for an RPC that never answers after the configured timeout', async () => {
      const silent = await silentServer();
      try {
        const registry = registryWith(database, await walletTestConfig(offlineChain({ rpcUrl: silent.url, rpcTimeoutMs: 300 })));
        const api = walletCalls(registry.request, (await walletSignIn(registry.request)).token);
        await api.register(newWallet().address);
        // The RPC never answers: an answer at all is the timeout's doing.
        const res = await api.active();
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ balance: null, balanceError: 'The RPC did not answer within 300 ms' });
        expect(registry.logs.some((l) => l.msg === 'wallet balance read failed')).toBe(true);
        expect(JSON.stringify(registry.logs)).not.toContain(silent.url);
      } finally {
        silent.close();
      }
    });

    it('reports a token contract that does not exist on the RPC’s chain', async () => {
      const registry = registryWith(database, await walletTestConfig(offlineChain({ rpcUrl: rpc.url, usdcAddress: newWallet().address })));
      const api = walletCalls(registry.request, (await walletSignIn(registry.request)).token);
      await api.register(newWallet().address);
      expect((await api.active()).body).toMatchObject({
        balance: null,
        balanceError: 'The USDC contract could not be read on this network',
      });
    });
  });
}
