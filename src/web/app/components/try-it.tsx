/**
 * Try it: fill the form, see the price the skill asks (checked against the listing), confirm,
 * sign in the wallet, get the result and the receipt. The usage is recorded for a signed-in user.
 * Where the skill offers a payment channel, the visitor may opt into it (channel.tsx); a call that
 * deposits into the channel shows the deposit beside the price before the wallet is asked. A skill
 * with a free trial can be tried free: the wallet signs the skill's sign-in (no payment), and once
 * its free calls are used up the visitor confirms a payment as for any call; the page then says the
 * trial is used up for that wallet and asks no sign-in again until it comes back.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { pageJson, registry } from '../lib/api';
import { loadPageConfig, networkName, pageConfig } from '../lib/config';
import { moment, shortAddress, trialText, usdc } from '../lib/format';
import { channelChoice, channelLeft, channelRecords, chooseChannel, openChannel } from '../lib/channels';
import { depositOf, pay, quote, usedTrials, type PaidOutcome, type Quoted, type SkillAnswer } from '../lib/pay';
import { account, connect, connected } from '../lib/session';
import type { AddressBalance, Skill } from 'skill-market/registry';
import { usageRecordOf } from 'skill-market/client';
import { walletErrorMessage } from '../lib/wallet/provider';
import { ChannelOptIn, ChannelReceipt, ChannelsLine } from './channel';
import { useSchemaForm } from './schema-form';
import { WalletPicker } from './wallet-picker';

type Step =
  | { name: 'input' }
  | { name: 'quoting' }
  | { name: 'confirm'; quote: Extract<Quoted, { type: 'payment-required' }>; input: unknown }
  | { name: 'paying'; channel: boolean }
  | { name: 'done'; outcome: PaidOutcome | { answer: SkillAnswer; receipt: undefined; trial?: { callsLeft: number | undefined } } }
  | { name: 'failed'; message: string };

function Receipt({ outcome }: { outcome: PaidOutcome }) {
  if (outcome.channel) return <ChannelReceipt paid={outcome.channel} />;
  const explorer = pageConfig.value?.explorer;
  const tx = outcome.receipt?.transaction;
  return (
    <section class="receipt" aria-label="Payment receipt">
      <h4>Receipt</h4>
      {outcome.charged === 'yes' && tx ? (
        <p>
          Paid <strong class="receipt-amount">{usdc(BigInt(outcome.receipt!.amount))} USDC</strong> on chain. Transaction{' '}
          {explorer ? (
            <a class="mono tx-hash" href={`${explorer.url}/tx/${tx}`} target="_blank" rel="noopener noreferrer">
              {tx}
            </a>
          ) : (
            <code class="tx-hash">{tx}</code>
          )}
          {explorer && <span class="muted small"> (opens {explorer.name})</span>}
        </p>
      ) : outcome.charged === 'no' ? (
        // As the SDK verified it: no payment was settled, and the signed authorization expires unused.
        <p>No payment was settled: you were not charged. Your signed authorization expires unused.</p>
      ) : (
        <p>
          {outcome.answer.ok ? 'The skill server sent no settlement receipt.' : 'The payment may have gone through.'}
          {outcome.receipt && (
            <>
              {' '}
              Payment reference <code class="break">{outcome.receipt.nonce}</code>.
            </>
          )}
        </p>
      )}
    </section>
  );
}

/** "Free trial used up" for the connected wallet, and until when when the skill server said. */
function TrialUsedUp({ until, address }: { until: number; address: string }) {
  return (
    <p class="trial-used">
      <strong>Free trial used up</strong> for <code title={address}>{shortAddress(address)}</code>
      {Number.isFinite(until) ? ` until ${moment(until)}` : ''}: calls are paid.
    </p>
  );
}

/** The payer's token balance, read by the registry (undefined while unknown or unreadable). */
function useBalance(address: string | undefined): bigint | undefined {
  const [balance, setBalance] = useState<bigint | undefined>();
  useEffect(() => {
    setBalance(undefined);
    if (!address) return;
    let current = true;
    pageJson<AddressBalance>(`/balances/${address}`).then(
      (read) => current && read.balanceAtomic !== null && setBalance(BigInt(read.balanceAtomic)),
      () => undefined, // unreadable: the page says nothing rather than a wrong figure
    );
    return () => {
      current = false;
    };
  }, [address]);
  return balance;
}

/** What the confirmed call would deposit into a payment channel first (see depositOf); `pending` while worked out. */
function useDeposit(quoted: Extract<Quoted, { type: 'payment-required' }> | undefined, payer: `0x${string}` | undefined) {
  const [deposit, setDeposit] = useState<bigint | undefined | 'pending'>('pending');
  useEffect(() => {
    setDeposit('pending');
    if (!quoted) return;
    let current = true;
    depositOf(quoted, payer).then(
      (amount) => current && setDeposit(amount),
      () => current && setDeposit(undefined), // refused by the policy's cap: paying says why, nothing signed
    );
    return () => {
      current = false;
    };
  }, [quoted, payer]);
  return deposit;
}

export function TryIt({ skill }: { skill: Skill }) {
  const form = useSchemaForm(skill.inputSchema);
  const [step, setStep] = useState<Step>({ name: 'input' });
  const [problem, setProblem] = useState<string | undefined>();
  const wallet = connected.value;
  const balance = useBalance(step.name === 'confirm' ? wallet?.address : undefined);
  const deposit = useDeposit(step.name === 'confirm' ? step.quote : undefined, wallet?.address);
  /** The balance seen before paying, kept to show what is left after. */
  const [before, setBefore] = useState<bigint | undefined>();
  const payButton = useRef<HTMLButtonElement>(null);
  // Once a wallet is connected in the confirmation, the connect buttons go away: the pay button
  // takes the focus (once the deposit is known), so a keyboard user is not left on nothing.
  useEffect(() => {
    if (step.name === 'confirm' && wallet && document.activeElement === document.body) payButton.current?.focus();
  }, [wallet, step.name, deposit]);

  /** Asks the skill's terms; with `trial`, the connected wallet first signs the skill's sign-in for a free call. */
  const ask = async (input: unknown, trial = false) => {
    setStep({ name: 'quoting' });
    try {
      const w = connected.value;
      const trialWallet = trial && w ? { provider: w.wallet.provider, address: w.address } : undefined;
      const q = await quote(skill, input, await loadPageConfig(), channelChoice.value, trialWallet);
      setStep(
        q.type === 'answered'
          ? { name: 'done', outcome: { answer: q.answer, receipt: undefined, ...(q.trial ? { trial: q.trial } : {}) } }
          : { name: 'confirm', quote: q, input },
      );
    } catch (error) {
      setStep({ name: 'failed', message: (error as Error).message });
    }
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    const read = form.read();
    if (!read.ok) return setProblem(read.problem);
    setProblem(undefined);
    await ask(read.value);
  };

  /** Tries the skill free (its trial), connecting a wallet first when none is. */
  const tryFree = async (pick?: Parameters<typeof connect>[0]) => {
    const read = form.read();
    if (!read.ok) return setProblem(read.problem);
    setProblem(undefined);
    if (pick) await connect(pick);
    await ask(read.value, true);
  };
  const freeCalls = trialText(skill.trial);
  /** When the connected wallet's free trial of this skill comes back, while it is used up. */
  const trialUntil = skill.trial && wallet ? usedTrials.until(skill.endpoint, wallet.address) : undefined;

  /** The visitor turns the channel on or off: remembered, and the terms asked for again with the new choice. */
  const toggleChannel = async (on: boolean, input: unknown) => {
    chooseChannel(on);
    await ask(input);
  };

  const confirm = async (q: Extract<Quoted, { type: 'payment-required' }>) => {
    const w = connected.value;
    if (!w) return;
    setBefore(balance);
    setStep({ name: 'paying', channel: q.terms.requirements.scheme === 'batch-settlement' });
    try {
      const outcome = await pay(q, { provider: w.wallet.provider, address: w.address });
      setStep({ name: 'done', outcome });
      const record = outcome.answer.ok && outcome.receipt && account.value ? usageRecordOf(outcome.receipt) : undefined;
      // Usage history is a convenience: a failed record never hides the result.
      if (record) registry.recordUsage(record).catch(() => undefined);
    } catch (error) {
      setStep({ name: 'failed', message: walletErrorMessage(error) });
    }
  };

  const byChannel = step.name === 'confirm' && step.quote.terms.requirements.scheme === 'batch-settlement';
  /** The open channel when it holds this call's price: no deposit, no wallet prompt. */
  const open = byChannel ? openChannel(channelRecords.value, skill.paymentAddress, wallet?.address) : undefined;
  const funded = open && channelLeft(open) >= BigInt(skill.priceAtomic) ? open : undefined;
  /** A usage-based skill paid from a channel is charged what the call used: its price is only the most. */
  const atMost = byChannel && step.quote.usageBased ? 'at most ' : '';

  return (
    <div class="try-it">
      <form onSubmit={submit} aria-describedby="try-it-note">
        {form.controls}
        {problem && (
          <p class="field-error" role="alert">
            {problem}
          </p>
        )}
        <p id="try-it-note" class="muted small">
          You see the price and confirm it before anything is signed.
        </p>
        {/* While a payment waits for confirmation, Pay is the one primary action. What depends on the
            wallet (restored a moment after the page shows: the open channel, the free trial) comes
            after this button, so it never moves under a pointer about to press it. */}
        <button
          type="submit"
          class={step.name === 'confirm' || step.name === 'paying' ? 'button' : 'button button-primary'}
          disabled={step.name === 'quoting' || step.name === 'paying'}
        >
          {step.name === 'quoting' ? 'Asking for the price…' : 'Call this skill'}
        </button>
        <ChannelsLine payTo={skill.paymentAddress} payer={wallet?.address} />
        {freeCalls && step.name !== 'confirm' && (
          <div class="trial-offer small">
            {wallet && trialUntil !== undefined ? (
              <TrialUsedUp until={trialUntil} address={wallet.address} />
            ) : (
              <p>
                <strong>{freeCalls}.</strong> Try it free: your wallet signs a sign-in, nothing is paid.
              </p>
            )}
            {trialUntil !== undefined ? null : wallet ? (
              <button type="button" class="button" disabled={step.name === 'quoting'} onClick={() => tryFree()}>
                Try free
              </button>
            ) : (
              <WalletPicker action="Try free with" onPick={(pick) => tryFree(pick)} />
            )}
          </div>
        )}
      </form>
      <div aria-live="polite">
        {step.name === 'confirm' && (
          // biome-ignore lint/a11y/useSemanticElements: a notice holding text and two buttons, not a form control group
          <div class="notice confirm" role="group" aria-labelledby="confirm-title">
            <h4 id="confirm-title">Confirm the payment</h4>
            {wallet && trialUntil !== undefined && <TrialUsedUp until={trialUntil} address={wallet.address} />}
            <p>
              Pay {atMost}
              <strong class="confirm-price">{usdc(skill.price)} USDC</strong> to{' '}
              <code title={step.quote.terms.requirements.payTo}>{shortAddress(step.quote.terms.requirements.payTo)}</code> on{' '}
              {networkName(skill.network)} for this call{byChannel ? ', from your payment channel' : ''}. The terms match the listing.
            </p>
            {step.quote.usageBased && (
              <p class="usage-based small">
                {byChannel
                  ? 'This skill is priced by use: the call is charged what it used, at most its price.'
                  : 'This skill is priced by use; one payment per call pays its most. A payment channel is charged only what each call used.'}
              </p>
            )}
            {byChannel && (
              <p class="channel-plan small">
                {deposit === 'pending' ? (
                  <>Working out whether the channel needs a deposit…</>
                ) : deposit ? (
                  <>
                    First,{' '}
                    <strong>
                      deposit <span class="confirm-deposit">{usdc(deposit)} USDC</span> into a payment channel
                    </strong>{' '}
                    (refundable; each call is charged from it). Your wallet signs the deposit; later calls need no wallet prompt.
                  </>
                ) : funded ? (
                  <>No wallet prompt: the session key signs this call; the channel holds {usdc(channelLeft(funded))}.</>
                ) : (
                  <>The session key signs this call from your channel.</>
                )}
              </p>
            )}
            {step.quote.offersChannel && (
              <ChannelOptIn
                deposit={deposit === 'pending' ? undefined : deposit}
                payTo={step.quote.terms.requirements.payTo}
                onChange={(on) => toggleChannel(on, step.input)}
              />
            )}
            {wallet ? (
              <p class="small">
                Paying from <code title={wallet.address}>{shortAddress(wallet.address)}</code> ({wallet.wallet.name})
                {balance !== undefined && (
                  <>
                    , which holds <strong class="balance-before">{usdc(balance)} USDC</strong>
                    {balance < BigInt(skill.priceAtomic) && <span class="field-error"> — not enough for this call</span>}
                  </>
                )}
                .
              </p>
            ) : (
              <WalletPicker action="Connect" onPick={connect} />
            )}
            <div class="row">
              <button
                ref={payButton}
                type="button"
                class="button button-primary"
                disabled={!wallet || (byChannel && deposit === 'pending')}
                onClick={() => confirm(step.quote)}
              >
                {byChannel && typeof deposit === 'bigint' && deposit > 0n
                  ? `Deposit ${usdc(deposit)}, pay ${atMost}${usdc(skill.price)} and call`
                  : `Pay ${atMost}${usdc(skill.price)} and call`}
              </button>
              <button type="button" class="button" onClick={() => setStep({ name: 'input' })}>
                Cancel
              </button>
            </div>
          </div>
        )}
        {step.name === 'paying' && (
          <p class="notice" role="status">
            {step.channel ? 'Paying from your channel…' : 'Sign the payment in your wallet; the call runs as soon as it is signed…'}
          </p>
        )}
        {step.name === 'failed' && (
          <div class="notice notice-error" role="alert">
            <strong>The call did not go through</strong>
            <p class="error-message">{step.message}</p>
          </div>
        )}
        {step.name === 'done' && (
          <div class={`notice ${step.outcome.answer.ok ? 'notice-ok' : 'notice-error'}`} role={step.outcome.answer.ok ? 'status' : 'alert'}>
            <h4>{step.outcome.answer.ok ? 'Result' : `The skill answered ${step.outcome.answer.status}`}</h4>
            {step.outcome.answer.ok ? (
              <pre class="result" tabIndex={0}>
                <code>
                  {typeof step.outcome.answer.result === 'string'
                    ? step.outcome.answer.result
                    : JSON.stringify(step.outcome.answer.result, null, 2)}
                </code>
              </pre>
            ) : (
              <p class="error-message">{step.outcome.answer.error}</p>
            )}
            {'trial' in step.outcome && step.outcome.trial && (
              <p class="trial-done">
                A free trial call: nothing was paid.
                {step.outcome.trial.callsLeft !== undefined &&
                  ` ${step.outcome.trial.callsLeft} free call${step.outcome.trial.callsLeft === 1 ? '' : 's'} left.`}
              </p>
            )}
            {'charged' in step.outcome && <Receipt outcome={step.outcome} />}
            {'charged' in step.outcome &&
              step.outcome.charged === 'yes' &&
              !step.outcome.channel &&
              before !== undefined &&
              step.outcome.receipt && (
                <p class="small">
                  Your wallet held {usdc(before)} USDC before this call and{' '}
                  <strong class="balance-after">{usdc(before - BigInt(step.outcome.receipt.amount))} USDC</strong> after it.
                </p>
              )}
          </div>
        )}
      </div>
    </div>
  );
}
