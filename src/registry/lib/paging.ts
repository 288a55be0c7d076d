/**
 * Announces the next page of a cursor-paged list the same way on every route: the cursor in
 * `X-Next-Cursor` and a relative `Link: <…?cursor=…>; rel="next"` keeping the other parameters.
 */
export function announceNextPage(headers: Record<string, unknown>, requestUrl: string, nextCursor: string | undefined): void {
  if (!nextCursor) return;
  headers['x-next-cursor'] = nextCursor;
  const next = new URL(requestUrl);
  next.searchParams.set('cursor', nextCursor);
  headers.link = `<${next.pathname}${next.search}>; rel="next"`;
}
