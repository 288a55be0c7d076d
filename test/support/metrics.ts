/**
 * Reading the Prometheus text format in tests: every line checked against the format (a comment,
 * or `name{label="value",…} number`), the samples parsed, and a sample's value looked up by name
 * and labels.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\["\\\\n])*"`;
const SAMPLE_LINE = new RegExp(
  `^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*)?\\})? (-?(?:\\d+(?:\\.\\d+)?(?:e[+-]?\\d+)?|\\+Inf|-Inf|NaN))$`,
);
const COMMENT_LINE = new RegExp(`^# (?:HELP ${NAME} .*|TYPE ${NAME} (?:counter|gauge|histogram|summary|untyped))$`);

/** The samples of an exposition; throws naming the first line that is not in the format. */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || COMMENT_LINE.test(line)) continue;
    const match = SAMPLE_LINE.exec(line);
    if (!match) throw new Error(`not a line of the Prometheus text format: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[key as string] = (value as string).replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample named `name` with exactly `labels`; undefined when there is none. */
export function sampleValue(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels);
  const found = samples.filter(
    (s) => s.name === name && Object.keys(s.labels).length === wanted.length && wanted.every(([k, v]) => s.labels[k] === v),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} with ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

/** Scrapes `/metrics` through `request`: the answer checked as the text format, and its samples. */
export async function scrape(
  request: (path: string, init?: RequestInit) => Promise<Response>,
  headers: Record<string, string> = {},
): Promise<{ samples: Sample[]; text: string }> {
  const res = await request('/metrics', { headers });
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}: ${await res.text()}`);
  const type = res.headers.get('content-type') ?? '';
  if (!type.startsWith('text/plain; version=0.0.4')) throw new Error(`GET /metrics answered ${type}`);
  const text = await res.text();
  return { samples: parseExposition(text), text };
}
