/**
 * Reads a body stream as UTF-8 text, stopping (and cancelling the stream) once more than `limit`
 * bytes arrived: undefined then. Used for requests the skill server accepts and for answers the
 * client reads, so neither can be made to buffer an unbounded body.
 */
export async function readLimited(body: ReadableStream<Uint8Array> | null, limit: number): Promise<string | undefined> {
  if (body === null) return '';
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
  return new TextDecoder().decode(bytes);
}
