import http from 'k6/http';

/**
 * The least a k6 script can do against one operation: the same request, a fixed credential, nothing
 * checked. Benchmarks compare the project's load scripts and servers against it (docs/benchmarks.md).
 */
const url = __ENV.BENCH_URL!;
const headers: Record<string, string> = JSON.parse(__ENV.BENCH_HEADERS || '{}');
const body = __ENV.BENCH_BODY || '';

const vus = Number(__ENV.BENCH_VUS || 32);
// BENCH_ITERATIONS: a fixed amount of work instead of a duration, for counting instructions per iteration.
const iterations = Number(__ENV.BENCH_ITERATIONS || 0);

export const options = {
  scenarios: {
    closed:
      iterations > 0
        ? { executor: 'shared-iterations', vus, iterations, maxDuration: '10m' }
        : { executor: 'constant-vus', vus, duration: `${__ENV.BENCH_SECONDS || 10}s` },
  },
  summaryTrendStats: ['avg', 'p(50)', 'p(95)', 'p(99)'],
};

// Eight hex digits that tell this run apart from earlier ones against the same server.
const run = (__ENV.BENCH_RUN || '0').padStart(8, '0').slice(-8);
let counter = 0;

export default function () {
  counter += 1;
  // A UUID v4-shaped reference id unique per run, VU and iteration, without the cost of a random UUID.
  const referenceId = `${run}-${String(__VU % 10000).padStart(4, '0')}-4000-8000-${String(counter).padStart(12, '0')}`;
  http.post(url, body, { headers: { ...headers, 'X-Reference-Id': referenceId } });
}
