/**
 * Every machine code of the SDK's errors, by the part that throws it: each error class extends
 * {@link MarketError} (sdk/http/errors.ts), whose `code` is one of these. One list, so a code is
 * never defined twice and `error.code` is checked against all of them. A leaf: imports nothing.
 */

/** Codes of a consumer's calls and registry reads (skill-market/client, /registry). */
type CallErrorCode =
  /** The registry answered with an error status. */
  | 'registry_error'
  /** The registry has no skill with that slug (404). */
  | 'skill_not_found'
  /** The skill is listed but switched off (`isActive: false`); nothing was sent to it. */
  | 'skill_inactive'
  /** A registry or skill server answered a body this client cannot trust. */
  | 'invalid_response'
  /** The input does not satisfy the skill's `inputSchema`; no request was made to the skill. */
  | 'invalid_input'
  /** `call()` needs a wallet; discovery does not. */
  | 'wallet_required'
  /** Favorites (and usage records) need `apiKey`. */
  | 'credentials_required'
  /** The skill is listed on a network this client does not pay on. */
  | 'network_not_allowed'
  /** The skill's endpoint is plain http on a non-loopback host (set `allowHttp` to permit). */
  | 'insecure_endpoint'
  /** The 402 terms differ from the registry listing (payTo, price, network, asset, …). */
  | 'terms_mismatch'
  /** The price is above `maxPrice`; nothing was signed. */
  | 'max_price_exceeded'
  /** The call would take spending past `budget`; nothing was signed. */
  | 'budget_exceeded'
  /** The skill server refused the signed payment (402 after the proof). */
  | 'payment_rejected'
  /**
   * A payment channel's server answered what this client cannot accept (a charge above the price,
   * a cumulative charge that is not its own record plus the charge, another channel): no voucher
   * is signed on that channel any more (withdraw its deposit with `market channels`).
   */
  | 'channel_stopped'
  /** A payment channel needs a deposit above `maxDeposit`; nothing was signed. */
  | 'max_deposit_exceeded'
  /** No payment channel with that id in this client's channel store. */
  | 'channel_not_found'
  /**
   * The skill ran but its payment was not confirmed in time (`pendingTimeoutMs`), or the server
   * could not determine it: `charged` is `'unknown'` (or `'yes'` when the chain shows it spent).
   */
  | 'payment_pending'
  /**
   * The skill answered and was paid, but its signed receipt is refused (another signer, an amount
   * or body it does not match): the result is kept on the error (`ReceiptError.result`), `charged` is `'yes'`.
   */
  | 'receipt_invalid'
  /** The skill's handler failed (HTTP 500 `{success:false, error}`); the message is the skill's. */
  | 'skill_failed'
  /** The skill server timed out (HTTP 504). */
  | 'skill_timeout'
  /** The skill server answered an unexpected status. */
  | 'skill_error'
  /** No answer after every retry (connection refused, dropped, timed out). */
  | 'network_error'
  /** The caller's AbortSignal fired. */
  | 'aborted'
  /** Something shaped like a private key or recovery phrase was about to be sent; nothing was. */
  | 'private_key_refused';

/** Machine codes carried by X402Error (skill-market/x402). */
export type X402ErrorCode =
  /** A price could not be turned into an exact positive amount of atomic units. */
  | 'invalid_price'
  /** A network id is not `eip155:<chainId>` (or a known v1 name), or has no known asset. */
  | 'invalid_network'
  /** A custom asset description (address, EIP-712 name/version, decimals) is invalid. */
  | 'invalid_asset'
  /** Payment terms could not be built or parsed (bad payTo, timeout, resource, domain). */
  | 'invalid_requirements'
  /** A payment proof (X-Payment / PAYMENT-SIGNATURE or a JSON payload) is malformed. */
  | 'malformed_payment'
  /** A PAYMENT-REQUIRED header or 402 body is malformed. */
  | 'malformed_payment_required'
  /** A PAYMENT-RESPONSE / X-PAYMENT-RESPONSE receipt (or facilitator answer) is malformed. */
  | 'malformed_settle_response'
  /** The payment uses a scheme other than `exact`. */
  | 'unsupported_scheme'
  /** The payment uses an x402Version other than 1 or 2. */
  | 'unsupported_version'
  /** A signature cannot be split or no signer can be recovered from it. */
  | 'invalid_signature';

/** Codes of KeystoreError (skill-market/wallet): why a keystore could not be written or opened. */
export type KeystoreErrorCode = 'invalid_keystore' | 'unsupported_keystore' | 'wrong_passphrase' | 'address_mismatch';

/** Code of WalletRegistrationError: the wallet was saved but the registry did not take it. */
type WalletErrorCode = 'wallet_not_registered';

/** Codes of the creator side's errors (skill-market/creator). */
type CreatorErrorCode =
  /** SkillDefinitionError: a skill definition that cannot work (price, schema, groups, timeout). */
  | 'invalid_skill'
  /** ServeConfigError: `serve()` cannot start (no skills, no wallet, a malformed option). */
  | 'invalid_serve_config'
  /** RegistrationError: registering the skills failed with `onError: 'throw'`. */
  | 'registration_failed'
  /** FacilitatorUnavailableError: the facilitator could not be reached or answered something unexpected. */
  | 'facilitator_unavailable'
  /** ChannelStoreDamagedError: the file channel store's snapshot is damaged; it opens again with `repair`. */
  | 'channel_store_damaged';
// SkillTimeoutError (a handler ran past its `timeout`) carries 'skill_timeout', the code its caller sees.

/** Machine codes of {@link MarketError}: every code any error of the SDK carries. */
export type MarketErrorCode = CallErrorCode | X402ErrorCode | KeystoreErrorCode | WalletErrorCode | CreatorErrorCode;
