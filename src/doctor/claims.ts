/**
 * `market doctor`: whether the facilitator's receiver authorizer signs a stranger's channel claims
 * (an open facilitator: whoever holds a payer's voucher can claim it up to its maximum). The doctor
 * asks, without a key, for the claim of a channel that does not exist, naming that authorizer: a
 * closed facilitator refuses it for want of the receiver's key; an open one signs it, and its
 * simulation fails (the channel holds nothing). Nothing is ever sent.
 */
import { randomBytes } from 'node:crypto';
import { getAddress, toHex, zeroAddress } from 'viem';
import { BATCH_SETTLEMENT_SCHEME, getKnownNetwork, MIN_WITHDRAW_DELAY } from 'skill-market/x402';
import type { SupportedKindSeen } from './channels';
import { isLocalNetwork, label, type CheckResult, type DoctorTarget } from './target';

/** Our facilitator's refusal of a claim without the receiver's key. */
const CONSENT_REQUIRED = 'invalid_batch_settlement_evm_claim_receiver_consent_required';
/** A claim the facilitator signed and simulated: the made-up channel holds nothing. */
const SIMULATION_FAILED = 'invalid_batch_settlement_evm_claim_simulation_failed';

const someAddress = () => getAddress(toHex(randomBytes(20)));

/** The claim's result; undefined when the facilitator offers no channels on the network (nothing to ask). */
export async function checkOpenClaims(
  facilitatorUrl: string,
  kinds: readonly SupportedKindSeen[],
  target: DoctorTarget,
  timeoutMs: number,
): Promise<CheckResult | undefined> {
  const name = 'facilitator claims';
  const authorizer = kinds.find((k) => k.scheme === BATCH_SETTLEMENT_SCHEME && k.network === target.network)?.extra?.receiverAuthorizer;
  const asset = target.asset ?? getKnownNetwork(target.network)?.usdc.address;
  if (!authorizer || !asset) return undefined;
  const channel = {
    payer: someAddress(),
    payerAuthorizer: zeroAddress,
    receiver: someAddress(),
    receiverAuthorizer: authorizer,
    token: asset,
    withdrawDelay: MIN_WITHDRAW_DELAY,
    salt: toHex(randomBytes(32)),
  };
  const row = { voucher: { channel, maxClaimableAmount: '1' }, signature: toHex(new Uint8Array(65)), totalClaimed: '1' };
  const requirements = {
    scheme: BATCH_SETTLEMENT_SCHEME,
    network: target.network,
    amount: '0',
    asset,
    payTo: channel.receiver,
    maxTimeoutSeconds: 0,
    extra: {},
  };
  const request = {
    x402Version: 2,
    paymentPayload: { x402Version: 2, accepted: requirements, payload: { type: 'claim', claims: [row] } },
    paymentRequirements: requirements,
  };
  let answer: { errorReason?: string };
  try {
    const res = await fetch(`${facilitatorUrl.replace(/\/+$/, '')}/settle`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
    if (res.status === 401 || res.status === 403)
      return { name, status: 'skip', detail: 'not checked: the facilitator asks callers for a key (FACILITATOR_API_KEYS)' };
    answer = (await res.json()) as { errorReason?: string };
  } catch {
    return { name, status: 'skip', detail: 'not checked: the facilitator did not answer a claim' };
  }
  if (answer.errorReason === CONSENT_REQUIRED) {
    return {
      name,
      status: 'ok',
      detail: "the facilitator's receiver authorizer signs claims only for receivers presenting their key (FACILITATOR_RECEIVER_KEYS)",
    };
  }
  if (answer.errorReason !== SIMULATION_FAILED) {
    return {
      name,
      status: 'skip',
      detail: `not checked: the facilitator answered a claim ${String(answer.errorReason ?? 'with no reason')}`,
    };
  }
  if (isLocalNetwork(target.network)) {
    return {
      name,
      status: 'ok',
      detail: "the facilitator is open (its receiver authorizer signs anyone's claims), as market dev's: fine on a local chain",
    };
  }
  return {
    name,
    status: 'warn',
    detail: `the facilitator is open on ${label(target.network)}: its receiver authorizer signs anyone's channel claims, so whoever holds a payer's voucher can claim it up to its maximum, more than a skill charged; set FACILITATOR_OPEN=false (the default with NODE_ENV=production) and give each creator a key in FACILITATOR_RECEIVER_KEYS`,
  };
}
