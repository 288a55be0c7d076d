/**
 * A paid call from the browser, with the same codec and checks the SDK uses: ask the skill for
 * its terms (the unpaid request answers 402), check them against the registry listing
 * (sdk/client/terms: network, payTo, exact price, asset, window), let the user confirm the price,
 * sign the EIP-3009 authorization in the wallet, resend with the proof, read the settlement.
 */
import { readAllowedAssets } from 'skill-market/client';
import { reasonOf, resultOf } from 'skill-market/client';
import { chooseTerms, readOfferedTerms, type ChosenTerms } from 'skill-market/client';
import {
  encodePaymentPayload,
  PAYMENT_SIGNATURE_HEADER,
  readSettleResponseHeader,
  signAuthorization,
  X_PAYMENT_HEADER,
  type ResourceInfo,
  type SettleResponse,
} from 'skill-market/x402';
import type { Skill } from 'skill-market/registry';
import type { PageConfig } from './config';
import { ensureChain, typedDataSigner } from './wallet/signer';
import type { Eip1193Provider } from './wallet/provider';

/** The skill's answer as the SDK reads it: the handler's result, or the reason it failed. */
export type SkillAnswer = { status: number; ok: true; result: unknown } | { status: number; ok: false; error: string };

/** The unpaid request's outcome: terms to confirm, or an answer already (a free call, a refused input). */
export type Quote = { type: 'payment-required'; terms: ChosenTerms; resource: ResourceInfo } | { type: 'answered'; answer: SkillAnswer };

export interface PaidOutcome {
  answer: SkillAnswer;
  /** The settlement the skill server reported; undefined when it sent none. */
  receipt: SettleResponse | undefined;
  /** The EIP-3009 nonce: the payment's reference when no transaction hash came back. */
  nonce: string;
}

async function post(skill: Skill, input: unknown, proof?: string): Promise<{ res: Response; text: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (proof) headers[X_PAYMENT_HEADER] = headers[PAYMENT_SIGNATURE_HEADER] = proof;
  let res: Response;
  try {
    res = await fetch(skill.endpoint, { method: 'POST', headers, body: JSON.stringify(input), mode: 'cors', credentials: 'omit' });
  } catch {
    throw new Error(
      `The skill server at ${new URL(skill.endpoint).origin} could not be reached from this browser (offline, or it does not allow calls from web pages).`,
    );
  }
  return { res, text: await res.text() };
}

function toAnswer(res: Response, text: string, slug: string): SkillAnswer {
  const answer = { status: res.status, headers: res.headers, text };
  if (!res.ok)
    return { status: res.status, ok: false, error: reasonOf(answer) ?? `The skill answered ${res.status} ${res.statusText}`.trim() };
  try {
    return { status: res.status, ok: true, result: resultOf(answer, slug, 'no', undefined) };
  } catch (error) {
    return { status: res.status, ok: false, error: (error as Error).message };
  }
}

/** The SDK client's default: the longest authorization window a server may ask for. */
const MAX_TIMEOUT_SECONDS = 600;

function policy(config: PageConfig) {
  const allowed = readAllowedAssets([{ network: config.network.id, address: config.asset.address, decimals: config.asset.decimals }]);
  return { allowed, maxTimeoutSeconds: MAX_TIMEOUT_SECONDS };
}

/** Sends the input unpaid: a 402 gives terms checked against the listing; any other answer is returned as is. */
export async function quote(skill: Skill, input: unknown, config: PageConfig): Promise<Quote> {
  const { res, text } = await post(skill, input);
  if (res.status !== 402) return { type: 'answered', answer: toAnswer(res, text, skill.slug) };
  const offered = readOfferedTerms({ status: res.status, headers: res.headers, text }, skill);
  return { type: 'payment-required', terms: chooseTerms(offered, skill, policy(config)), resource: offered.resource };
}

/** Signs the confirmed terms with the wallet and sends the paid request. */
export async function pay(
  skill: Skill,
  input: unknown,
  quoted: Extract<Quote, { type: 'payment-required' }>,
  wallet: { provider: Eip1193Provider; address: `0x${string}` },
): Promise<PaidOutcome> {
  await ensureChain(wallet.provider, Number(quoted.terms.requirements.network.split(':')[1]));
  const payload = await signAuthorization(typedDataSigner(wallet.provider, wallet.address), quoted.terms.requirements, {
    resource: quoted.resource,
  });
  const { res, text } = await post(skill, input, encodePaymentPayload(payload));
  const settled = readSettleResponseHeader(res.headers);
  return {
    answer: toAnswer(res, text, skill.slug),
    receipt: settled.type === 'receipt' ? settled.receipt : undefined,
    nonce: payload.payload.authorization.nonce,
  };
}
