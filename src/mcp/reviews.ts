/**
 * Reviews as the registry publishes them (`GET /skills/:slug/reviews`: verified buyers' scores
 * 1–5, newest first). A registry without that path (404 or 405) is reported as "none offered",
 * never invented.
 */
const TIMEOUT_MS = 10_000;

export type Reviews = { available: true; items: unknown[] } | { available: false; reason: string };

export async function fetchReviews(apiUrl: string, slug: string, fetchImpl: typeof fetch = fetch): Promise<Reviews> {
  const url = `${apiUrl.replace(/\/+$/, '')}/skills/${encodeURIComponent(slug)}/reviews`;
  const res = await fetchImpl(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (res.status === 404 || res.status === 405 || res.status === 501) {
    await res.body?.cancel();
    return { available: false, reason: `this registry has no reviews endpoint: GET /skills/${slug}/reviews answered ${res.status}` };
  }
  if (!res.ok) throw new Error(`The registry's reviews of ${slug} failed with ${res.status}`);
  const body = (await res.json().catch(() => undefined)) as unknown;
  const items = Array.isArray(body)
    ? body
    : Array.isArray((body as { reviews?: unknown })?.reviews)
      ? (body as { reviews: unknown[] }).reviews
      : undefined;
  if (!items) throw new Error(`The registry answered reviews of ${slug} in a shape this version does not read`);
  return { available: true, items };
}
