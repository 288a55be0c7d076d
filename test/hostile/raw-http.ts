/** Raw HTTP over a socket, for what only shows on the wire: missing Host, pipelining, the server's own refusals. */

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Longest wait for the server to answer and close; past it the exchange counts as a hang. */
const HANG_MS = 8_000;

/**
 * Writes `raw` in one go and reads until the server closes the connection (send `Connection:
 * close`, or HTTP/1.0). Returns every answer found, in order.
 */
export async function exchange(port: number, raw: string): Promise<RawAnswer[]> {
  let received = Buffer.alloc(0);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no close within ${HANG_MS} ms; got ${JSON.stringify(received.toString().slice(0, 300))}`)),
      HANG_MS,
    );
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    void Bun.connect({
      hostname: '127.0.0.1',
      port,
      socket: {
        open: (socket) => void socket.write(raw),
        data: (_socket, chunk) => {
          received = Buffer.concat([received, chunk]);
        },
        close: done,
        error: done,
        end: (socket) => void socket.end(),
      },
    }).catch(reject);
  });
  return parseAnswers(received.toString('latin1'));
}

function parseAnswers(text: string): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/')) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd < 0) break;
    const [statusLine, ...lines] = rest.slice(0, headEnd).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const at = line.indexOf(':');
      headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    const bodyStart = headEnd + 4;
    answers.push({
      status: Number(statusLine!.split(' ')[1]),
      headers,
      body: Buffer.from(rest.slice(bodyStart, bodyStart + length), 'latin1').toString('utf8'),
    });
    rest = rest.slice(bodyStart + length);
  }
  return answers;
}
