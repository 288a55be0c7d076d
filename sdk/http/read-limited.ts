/**
 * Reads a body stream, stopping (and cancelling the stream) once more than `limit` bytes arrived:
 * undefined then. Used for requests the servers accept and for answers the client reads, so none
 * can be made to buffer an unbounded body.
 *
 * @example
 * const bytes = await readLimitedBytes(request.body, 1024 * 1024);
 * if (bytes === undefined) return new Response('body too large', { status: 413 });
 */
export async function readLimitedBytes(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array | undefined> {
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * readLimitedBytes as UTF-8 text (bytes that are not UTF-8 become U+FFFD).
 *
 * @example
 * const text = await readLimited(answer.body, 256 * 1024); // undefined when the answer is larger
 */
export async function readLimited(body: ReadableStream<Uint8Array> | null, limit: number): Promise<string | undefined> {
  const bytes = await readLimitedBytes(body, limit);
  return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
}
