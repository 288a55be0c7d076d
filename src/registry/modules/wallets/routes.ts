import { Elysia } from 'elysia';
import { getAddress } from 'viem';
import type { ServiceContext } from '../../context';
import { authPlugin } from '../auth';
import { balanceReader } from './balance';
import { refusePrivateKeys } from './guard';
import * as m from 'skill-market/registry';
import { issueProofMessage } from './proof';
import { getActiveWalletWithBalance, getWalletWithBalance, listWallets, registerWallet, revokeWallet, setWalletLabel } from './service';

const tags = ['Spending wallets'];
const jsonNull = () => new Response('null', { headers: { 'content-type': 'application/json' } });

/**
 * `/wallet/*`: spending wallets, self-custody addresses whose keys stay on the client. Every
 * route needs a session or an API key (401 `Authentication required` without one).
 */
export function walletRoutes(ctx: ServiceContext) {
  const balances = balanceReader(ctx.config.chain, ctx.clock, ctx.logger);
  // Public: any address's token balance (public chain data), for a payer about to pay from it.
  const publicBalances = new Elysia({ name: 'balance-routes' }).get(
    '/balances/:address',
    async ({ params }) => {
      const address = getAddress(params.address);
      const read = await balances.read(address);
      const base = { address, network: balances.network, asset: balances.asset };
      // Like a wallet's balance: unreadable now is an answer (null and why), not a failure.
      return read.type === 'ok'
        ? { ...base, balanceAtomic: read.atomic.toString() }
        : { ...base, balanceAtomic: null, balanceError: read.error };
    },
    {
      params: m.AddressParam,
      response: m.AddressBalance,
      detail: { tags, summary: 'Any address’s balance of the payment token (public; read on chain, briefly cached; null when unreadable)' },
    },
  );
  return new Elysia({ name: 'wallet-routes-all' }).use(publicBalances).use(walletRoutesOf(ctx, balances));
}

function walletRoutesOf(ctx: ServiceContext, balances: ReturnType<typeof balanceReader>) {
  return new Elysia({ name: 'wallet-routes', prefix: '/wallet' })
    .use(authPlugin(ctx))
    .onTransform(refusePrivateKeys)
    .post('/challenge', ({ principal, body }) => issueProofMessage(body.address as `0x${string}`, principal.userId, ctx.clock.now()), {
      auth: 'consumer',
      body: m.WalletChallengeBody,
      response: m.WalletChallenge,
      detail: { tags, summary: 'A message for the wallet’s key to sign, proving you hold it (valid 10 minutes)' },
    })
    .post(
      '/generate',
      async ({ principal, body, set }) => {
        const { wallet, created } = await registerWallet(ctx, principal.userId, body);
        set.status = created ? 201 : 200;
        return wallet;
      },
      {
        auth: 'consumer',
        body: m.RegisterWallet,
        response: { 200: m.WalletView, 201: m.WalletView },
        detail: { tags, summary: 'Register a spending wallet by its address (never its key); it becomes the active wallet' },
      },
    )
    .get(
      '',
      async ({ principal }) => {
        const wallet = await getActiveWalletWithBalance(ctx, principal.userId, balances);
        // Elysia sends an empty body for a bare null; clients expect the JSON literal `null`.
        return wallet ?? (jsonNull() as unknown as null);
      },
      {
        auth: 'consumer',
        response: m.ActiveWalletOrNull,
        detail: { tags, summary: 'The active wallet with its live USDC balance, or null' },
      },
    )
    .get('/all', ({ principal }) => listWallets(ctx, principal.userId), {
      auth: 'consumer',
      response: m.WalletList,
      detail: { tags, summary: 'Every wallet, revoked ones included, newest first' },
    })
    .get('/:address', ({ principal, params }) => getWalletWithBalance(ctx, principal.userId, params.address, balances), {
      auth: 'consumer',
      params: m.WalletAddressParam,
      response: m.ActiveWallet,
      detail: { tags, summary: 'One of your wallets (revoked ones too) with its live USDC balance' },
    })
    .patch('/:address', ({ principal, params, body }) => setWalletLabel(ctx, principal.userId, params.address, body.label), {
      auth: 'consumer',
      params: m.WalletAddressParam,
      body: m.UpdateLabel,
      response: m.WalletView,
      detail: { tags, summary: 'Set a wallet’s label (null removes it)' },
    })
    .delete(
      '/:address',
      async ({ principal, params }) => ({ success: true as const, wallet: await revokeWallet(ctx, principal.userId, params.address) }),
      {
        auth: 'consumer',
        params: m.WalletAddressParam,
        response: m.RevokedWallet,
        detail: { tags, summary: 'Revoke a wallet: no longer active, still listed; funds on-chain are untouched' },
      },
    );
}
