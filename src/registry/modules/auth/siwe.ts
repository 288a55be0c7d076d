import { and, desc, eq, gt, isNull } from 'drizzle-orm';
import { createPublicClient, getAddress, http, verifyMessage, type Hex, type PublicClient } from 'viem';
import { createSiweMessage, generateSiweNonce, parseSiweMessage, validateSiweMessage } from 'viem/siwe';
import { authChallenges } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { AppError } from '../../../http';

export interface Challenge {
  message: string;
  nonce: string;
  expiresAt: string;
}

/** Issues an EIP-4361 message for `address` with a fresh single-use nonce, valid for 5 minutes. */
export async function createChallenge(ctx: ServiceContext, address: string): Promise<Challenge> {
  const { siwe } = ctx.config.auth;
  const now = ctx.clock.now();
  const expiresAt = new Date(now.getTime() + siwe.challengeTtlSeconds * 1000);
  const nonce = generateSiweNonce();
  const message = createSiweMessage({
    domain: siwe.domain,
    address: getAddress(address.toLowerCase()),
    statement: 'Sign in to Skill Market.',
    uri: siwe.uri,
    version: '1',
    chainId: siwe.chainId,
    nonce,
    issuedAt: now,
    expirationTime: expiresAt,
  });
  await ctx.db.insert(authChallenges).values({ nonce, address: getAddress(address.toLowerCase()), message, createdAt: now, expiresAt });
  return { message, nonce, expiresAt: expiresAt.toISOString() };
}

export type SignedChallenge = { message: string; signature: Hex } | { address: string; signature: Hex };

/**
 * Checks a signed challenge and consumes it. The message must be exactly the one issued (same
 * domain, URI, chain, nonce, expiry), signed by its address (ECDSA, or ERC-1271 through the
 * chain's RPC for contract wallets), unexpired and unused. Returns the signer's address.
 */
export async function verifyChallenge(ctx: ServiceContext, input: SignedChallenge, rpc: () => PublicClient): Promise<string> {
  const now = ctx.clock.now();
  const challenge = 'message' in input ? await byMessage(ctx, input.message) : await latestFor(ctx, input.address, now);
  const parsed = parseSiweMessage(challenge.message);
  const { siwe } = ctx.config.auth;
  if (
    parsed.chainId !== siwe.chainId ||
    parsed.uri !== siwe.uri ||
    !validateSiweMessage({ message: parsed, domain: siwe.domain, nonce: challenge.nonce, address: challenge.address as Hex, time: now })
  ) {
    throw new AppError('UNAUTHORIZED', 'Challenge expired or not valid for this registry');
  }
  if (!(await signedBy(challenge.address as Hex, challenge.message, input.signature, rpc))) {
    throw new AppError('UNAUTHORIZED', 'Invalid signature');
  }
  const [claimed] = await ctx.db
    .update(authChallenges)
    .set({ usedAt: now })
    .where(and(eq(authChallenges.nonce, challenge.nonce), isNull(authChallenges.usedAt), gt(authChallenges.expiresAt, now)))
    .returning({ address: authChallenges.address });
  if (!claimed) throw new AppError('UNAUTHORIZED', 'Challenge expired or already used');
  return claimed.address;
}

async function byMessage(ctx: ServiceContext, message: string) {
  let nonce: string | undefined;
  try {
    nonce = parseSiweMessage(message).nonce;
  } catch {
    nonce = undefined;
  }
  const challenge = nonce ? await ctx.db.query.authChallenges.findFirst({ where: eq(authChallenges.nonce, nonce) }) : undefined;
  if (!challenge) throw new AppError('UNAUTHORIZED', 'Unknown challenge: request one from POST /auth/challenge');
  if (challenge.message !== message) throw new AppError('UNAUTHORIZED', 'The message differs from the challenge issued');
  if (challenge.usedAt !== null) throw new AppError('UNAUTHORIZED', 'Challenge expired or already used');
  return challenge;
}

async function latestFor(ctx: ServiceContext, address: string, now: Date) {
  const challenge = await ctx.db.query.authChallenges.findFirst({
    where: and(
      eq(authChallenges.address, getAddress(address.toLowerCase())),
      isNull(authChallenges.usedAt),
      gt(authChallenges.expiresAt, now),
    ),
    orderBy: desc(authChallenges.createdAt),
  });
  if (!challenge) throw new AppError('UNAUTHORIZED', 'No open challenge for this address: request one from POST /auth/challenge');
  return challenge;
}

async function signedBy(address: Hex, message: string, signature: Hex, rpc: () => PublicClient): Promise<boolean> {
  const ecdsa = await verifyMessage({ address, message, signature }).catch(() => false);
  if (ecdsa) return true;
  // Contract wallets (ERC-1271, and ERC-6492 for undeployed ones) answer on chain; an RPC that
  // cannot be reached fails closed.
  return rpc()
    .verifyMessage({ address, message, signature })
    .catch(() => false);
}

/** A public client on the chain's RPC (MARKET_RPC_URL), made on first use. */
export function rpcClientFactory(rpcUrl: string, timeoutMs: number): () => PublicClient {
  let client: PublicClient | undefined;
  return () => (client ??= createPublicClient({ transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 0 }) }));
}
