import { Elysia } from 'elysia';

/**
 * The policy of every answer that is not a page (JSON, errors, scripts, styles): it loads nothing
 * and may not be framed. Pages set their own policy (`content-security-policy` in `set.headers`),
 * which replaces this one.
 */
const API_CONTENT_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** One year: how long a browser keeps to https once it has seen the header. */
const HSTS_SECONDS = 31_536_000;

export interface SecurityHeaderOptions {
  /** The server's public URL; `Strict-Transport-Security` is sent only when it is https. */
  publicUrl?: URL | undefined;
}

/**
 * The headers every answer of a server carries, errors included: no framing by another origin
 * (`frame-ancestors 'none'` and `X-Frame-Options: DENY` for older browsers), no type sniffing, the
 * referrer cut to the origin across sites, a content policy, and HSTS behind an https PUBLIC_URL
 * (never on plain http, where it would be ignored or, behind a proxy, wrong). Set when the request
 * arrives, so a refusal raised before any route still carries them.
 */
export function securityHeaders(options: SecurityHeaderOptions = {}) {
  const headers: Record<string, string> = {
    'content-security-policy': API_CONTENT_POLICY,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'strict-origin-when-cross-origin',
  };
  if (options.publicUrl?.protocol === 'https:') headers['strict-transport-security'] = `max-age=${HSTS_SECONDS}`;
  return new Elysia({ name: 'security-headers', seed: headers }).onRequest(({ set }) => {
    Object.assign(set.headers, headers);
  });
}
