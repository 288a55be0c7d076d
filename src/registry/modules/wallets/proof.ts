/**
 * Proof that a user holds a spending wallet's key: the registry issues a message naming the
 * wallet, the account, a random nonce and an expiry; the wallet signs it (EIP-191 personal_sign).
 * Nothing is stored: a proof only ever registers that wallet to that account (which is
 * idempotent), and only until it expires.
 */
import { getAddress, verifyMessage, type Address, type Hex } from 'viem';
import { AppError } from '../../../http';

/** How long an issued message may be signed and sent. */
const PROOF_TTL_SECONDS = 600;

const HEADER = 'Skill Market: I hold the key of this spending wallet and register it to my account.';

/** The message to sign for `address` and account `userId`, valid until `expiresAt`. */
function proofMessage(address: Address, userId: string, nonce: string, expiresAt: Date): string {
  return [HEADER, `Wallet: ${address}`, `Account: ${userId}`, `Nonce: ${nonce}`, `Expires: ${expiresAt.toISOString()}`].join('\n');
}

/** A fresh message to sign; the nonce makes every one distinct. */
export function issueProofMessage(address: Address, userId: string, now: Date): { message: string; expiresAt: string } {
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('hex');
  const expiresAt = new Date(now.getTime() + PROOF_TTL_SECONDS * 1000);
  return { message: proofMessage(getAddress(address.toLowerCase()), userId, nonce, expiresAt), expiresAt: expiresAt.toISOString() };
}

const refused = (why: string) => new AppError('VALIDATION', `Invalid request: field "proof": ${why}`, [{ field: 'proof', message: why }]);

/**
 * Checks a proof for registering `address` to `userId` at `now`: the message must be one the
 * registry issues for exactly these (unexpired), and the signature must be the wallet's. Throws a
 * 400 naming `proof` otherwise.
 */
export async function checkProof(
  proof: { message: string; signature: string },
  address: Address,
  userId: string,
  now: Date,
): Promise<void> {
  const lines = proof.message.split('\n');
  const expires = lines[4]?.startsWith('Expires: ') ? new Date(lines[4].slice('Expires: '.length)) : undefined;
  const nonce = lines[3]?.startsWith('Nonce: ') ? lines[3].slice('Nonce: '.length) : '';
  if (
    !expires ||
    Number.isNaN(expires.getTime()) ||
    !/^[0-9a-f]{32}$/.test(nonce) ||
    proof.message !== proofMessage(address, userId, nonce, expires)
  ) {
    throw refused('the message is not the one issued by POST /wallet/challenge for this wallet and your account');
  }
  if (expires.getTime() <= now.getTime()) throw refused('the message has expired: ask POST /wallet/challenge for a new one');
  if (expires.getTime() > now.getTime() + PROOF_TTL_SECONDS * 1000) throw refused('the message expires later than any the registry issues');
  let valid = false;
  try {
    valid = await verifyMessage({ address, message: proof.message, signature: proof.signature as Hex });
  } catch {
    valid = false;
  }
  if (!valid) throw refused('the signature is not the wallet’s signature of the message');
}
