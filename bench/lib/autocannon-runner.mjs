// Runs one autocannon load in this (Node) process and prints its summary as JSON on stdout.
// The load generator stays out of the process under test. Input: one JSON argument:
// { url, method?, headers?, body?, connections, duration, paths?: string[], forwardedFor?: boolean }
import autocannon from 'autocannon';

const spec = JSON.parse(process.argv[2]);
let n = 0;
const setupRequest = (req) => {
  n++;
  const next = { ...req, headers: { ...req.headers } };
  if (spec.paths) next.path = spec.paths[n % spec.paths.length];
  if (spec.forwardedFor) next.headers['x-forwarded-for'] = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  return next;
};
const result = await autocannon({
  url: spec.url,
  method: spec.method ?? 'GET',
  headers: spec.headers ?? {},
  body: spec.body,
  connections: spec.connections,
  duration: spec.duration,
  requests: [{ setupRequest }],
});
process.stdout.write(
  JSON.stringify({
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  }),
);
