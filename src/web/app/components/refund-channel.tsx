/**
 * "Get it back": the payer's unspent deposit back from a payment channel, from the page. The
 * channel's server refunds it and its facilitator pays the gas, so the wallet needs no ETH; the
 * wallet (or this browser's session key, for a channel Try it opened) signs one zero-charge
 * voucher, no transaction. A server that does not cooperate is said in plain words, with the way
 * out that needs no server (the contract's timed withdrawal, from the command line).
 */
import { eip1193Signer, type RefundOutcome } from 'skill-market/client';
import type { ChannelView } from 'skill-market/registry';
import { useState } from 'preact/hooks';
import { loadPageConfig } from '../lib/config';
import { usdc } from '../lib/format';
import { planRefund, refund, type RefundPlan } from '../lib/refund';
import { connect, connected } from '../lib/session';
import { TxLink } from './tx-link';
import { WalletPicker } from './wallet-picker';

type Step =
  | { name: 'idle' }
  | { name: 'working'; what: string }
  | { name: 'wallet'; plan: Extract<RefundPlan, { type: 'wallet' }> }
  | { name: 'done'; outcome: RefundOutcome }
  | { name: 'failed'; message: string };

/** The row's money-back action; `onRefunded` hears the amount returned (the list's figures follow at their next read of the chain). */
export function RefundChannel({ channel, onRefunded }: { channel: ChannelView; onRefunded: (amount: bigint) => void }) {
  const [step, setStep] = useState<Step>({ name: 'idle' });
  const yours = BigInt(channel.payerAtomic ?? '0');

  const run = async (work: () => Promise<RefundOutcome>) => {
    setStep({ name: 'working', what: 'Asking the server for the refund…' });
    try {
      const outcome = await work();
      setStep({ name: 'done', outcome });
      if (outcome.type === 'refunded') onRefunded(outcome.amount);
    } catch (error) {
      setStep({ name: 'failed', message: (error as Error).message });
    }
  };

  const start = async () => {
    setStep({ name: 'working', what: 'Finding the channel’s server…' });
    try {
      const plan = await planRefund(channel, (await loadPageConfig()).network.chainId);
      if (plan.type === 'impossible') return setStep({ name: 'failed', message: `This page cannot refund it: ${plan.why}.` });
      if (plan.type === 'session-key') return run(() => refund(plan.record, plan.signer));
      setStep({ name: 'wallet', plan });
    } catch (error) {
      setStep({ name: 'failed', message: (error as Error).message });
    }
  };

  const signWithWallet = (plan: Extract<RefundPlan, { type: 'wallet' }>) => {
    const wallet = connected.value;
    if (!wallet) return;
    if (wallet.address.toLowerCase() !== plan.wallet.toLowerCase()) {
      return setStep({ name: 'failed', message: `The channel is ${plan.wallet}'s: connect that wallet, not ${wallet.address}.` });
    }
    return run(() => refund(plan.record, eip1193Signer(wallet.wallet.provider, wallet.address)));
  };

  switch (step.name) {
    case 'idle':
      return (
        <button type="button" class="button button-small" onClick={start} disabled={yours === 0n}>
          Get it back
        </button>
      );
    case 'working':
      return (
        <p class="small muted" role="status" aria-live="polite">
          {step.what}
        </p>
      );
    case 'wallet':
      return (
        <div>
          <p class="small">Your wallet signs the refund (a signature, no transaction, no gas).</p>
          {connected.value ? (
            <button type="button" class="button button-small button-primary" onClick={() => signWithWallet(step.plan)}>
              Sign and get {usdc(yours)} back
            </button>
          ) : (
            <WalletPicker action="Connect" onPick={connect} />
          )}
        </div>
      );
    case 'done':
      return step.outcome.type === 'refunded' ? (
        <p class="small" role="status" data-testid="refund-done">
          Refunded {usdc(step.outcome.amount)} <TxLink reference={step.outcome.transaction} network={channel.network} short />
        </p>
      ) : (
        <p class="small" role="alert" data-testid="refund-refused">
          The server did not refund it: {step.outcome.message}. The contract's timed withdrawal needs no server:{' '}
          <code>market channels --withdraw {channel.channelId}</code>, then <code>--finalize</code> after the channel's delay (your wallet
          pays its gas).
        </p>
      );
    case 'failed':
      return (
        <div class="small" role="alert">
          <p>{step.message}</p>
          <button type="button" class="button button-small" onClick={() => setStep({ name: 'idle' })}>
            Try again
          </button>
        </div>
      );
  }
}
