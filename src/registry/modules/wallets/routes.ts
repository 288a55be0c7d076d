import { Elysia } from 'elysia';
import { getAddress } from 'viem';
import type { ServiceContext } from '../../context';
import { routeHooks } from '../../../http';
import { authPlugin } from '../auth';
import { balanceReader } from './balance';
import { refusePrivateKeys } from './guard';
import { REGISTRY_ROUTES as r } from 'skill-market/registry';
import { issueProofMessage } from './proof';
import { getActiveWalletWithBalance, getWalletWithBalance, listWallets, registerWallet, revokeWallet, setWalletLabel } from './service';

const jsonNull = () => new Response('null', { headers: { 'content-type': 'application/json' } });

/**
 * `/wallet/*`: spending wallets, self-custody addresses whose keys stay on the client. Every
 * route needs a session or an API key (401 `Authentication required` without one).
 */
export function walletRoutes(ctx: ServiceContext) {
  const balances = balanceReader(ctx.config.chain, ctx.clock, ctx.logger);
  // Public: any address's token balance (public chain data), for a payer about to pay from it.
  const publicBalances = new Elysia({ name: 'balance-routes' }).route(
    r.balance.method,
    r.balance.path,
    async ({ params }) => {
      const address = getAddress(params.address);
      const read = await balances.read(address);
      const base = { address, network: balances.network, asset: balances.asset };
      // Like a wallet's balance: unreadable now is an answer (null and why), not a failure.
      return read.type === 'ok'
        ? { ...base, balanceAtomic: read.atomic.toString() }
        : { ...base, balanceAtomic: null, balanceError: read.error };
    },
    routeHooks(r.balance),
  );
  return new Elysia({ name: 'wallet-routes-all' }).use(publicBalances).use(walletRoutesOf(ctx, balances));
}

function walletRoutesOf(ctx: ServiceContext, balances: ReturnType<typeof balanceReader>) {
  return new Elysia({ name: 'wallet-routes' })
    .use(authPlugin(ctx))
    .onTransform(refusePrivateKeys)
    .route(
      r.walletChallenge.method,
      r.walletChallenge.path,
      ({ principal, body }) => issueProofMessage(body.address as `0x${string}`, principal.userId, ctx.clock.now()),
      routeHooks(r.walletChallenge),
    )
    .route(
      r.registerWallet.method,
      r.registerWallet.path,
      async ({ principal, body, set }) => {
        const { wallet, created } = await registerWallet(ctx, principal.userId, body);
        set.status = created ? 201 : 200;
        return wallet;
      },
      routeHooks(r.registerWallet),
    )
    .route(
      r.activeWallet.method,
      r.activeWallet.path,
      async ({ principal }) => {
        const wallet = await getActiveWalletWithBalance(ctx, principal.userId, balances);
        // Elysia sends an empty body for a bare null; clients expect the JSON literal `null`.
        return wallet ?? (jsonNull() as unknown as null);
      },
      routeHooks(r.activeWallet),
    )
    .route(r.wallets.method, r.wallets.path, ({ principal }) => listWallets(ctx, principal.userId), routeHooks(r.wallets))
    .route(
      r.wallet.method,
      r.wallet.path,
      ({ principal, params }) => getWalletWithBalance(ctx, principal.userId, params.address, balances),
      routeHooks(r.wallet),
    )
    .route(
      r.setWalletLabel.method,
      r.setWalletLabel.path,
      ({ principal, params, body }) => setWalletLabel(ctx, principal.userId, params.address, body.label),
      routeHooks(r.setWalletLabel),
    )
    .route(
      r.revokeWallet.method,
      r.revokeWallet.path,
      async ({ principal, params }) => ({ success: true as const, wallet: await revokeWallet(ctx, principal.userId, params.address) }),
      routeHooks(r.revokeWallet),
    );
}
