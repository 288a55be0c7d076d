import { requestPathAndQuery } from 'skill-market/http';

/**
 * Announces the next page of a cursor-paged list: the cursor in `X-Next-Cursor` and a relative
 * `Link: <path?…&cursor=…>; rel="next"` keeping the other query parameters, as `GET /skills` does.
 */
export function announceNextPage(headers: Record<string, unknown>, requestUrl: string, nextCursor: string | undefined): void {
  if (!nextCursor) return;
  headers['x-next-cursor'] = nextCursor;
  // Relative to a placeholder base: only the path and query are kept, whatever the Host was.
  const next = new URL(requestPathAndQuery(requestUrl), 'http://localhost');
  next.searchParams.set('cursor', nextCursor);
  headers.link = `<${next.pathname}${next.search}>; rel="next"`;
}
