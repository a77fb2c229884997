import http from 'k6/http';

/**
 * The least a k6 script can do against one operation: the same request, a fixed credential, nothing
 * checked. Benchmarks compare the project's load scripts and servers against it (docs/benchmarks.md).
 */
const url = __ENV.BENCH_URL!;
const headers: Record<string, string> = JSON.parse(__ENV.BENCH_HEADERS || '{}');
const body = __ENV.BENCH_BODY || '';

export const options = {
  scenarios: { closed: { executor: 'constant-vus', vus: Number(__ENV.BENCH_VUS || 32), duration: `${__ENV.BENCH_SECONDS || 10}s` } },
  summaryTrendStats: ['avg', 'p(50)', 'p(95)', 'p(99)'],
};

let counter = 0;

export default function () {
  counter += 1;
  // A reference id unique per VU and iteration, without the cost of a random UUID.
  const referenceId = `00000000-0000-4000-8${String(__VU % 1000).padStart(3, '0')}-${String(counter).padStart(12, '0')}`;
  http.post(url, body, { headers: { ...headers, 'X-Reference-Id': referenceId } });
}
