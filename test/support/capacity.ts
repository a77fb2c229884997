import { kneeOf, saturationOf, verdictOf, type SearchSettings, type Step } from '../../load/runner/capacity-search.ts';
import type { CapacityReport } from '../../load/runner/capacity-report.ts';

/** Synthetic steps and reports of npm run capacity, for the tests of its search and its pages. */
export const SETTINGS: SearchSettings = {
  startRate: 100,
  factor: 2,
  maxRate: 100_000,
  precision: 0.1,
  maxDurationMs: 3_600_000,
  stepSeconds: 10,
  generatorCoresLimit: 1.8,
  confirmMisses: 0,
  kneeFactor: 3,
};

/** A step as a target with the given capacity would show it: p95 rising past the knee, missing p95 above the capacity. */
export function stepAt(rate: number, capacity: number, overrides: Partial<Step> = {}): Step {
  const p95 = rate <= capacity / 2 ? 2 : rate <= capacity ? 40 : 400;
  const held = rate <= capacity;
  const throughput = Math.min(rate, capacity * 1.02);
  const latencyMs = { p50: p95 / 2, p90: p95 * 0.9, p95, p99: p95 * 2, p999: p95 * 3, max: p95 * 4 };
  return {
    rate,
    durationSeconds: 10,
    throughput,
    requests: Math.round(throughput * 10.5),
    requestsPerSecond: throughput * 1.05,
    operations: { requestToPay: { answered: throughput * 10, throughput, started: throughput * 10, failed: 0, latencyMs } },
    latencyMs,
    latencyLowerBound: false,
    timeline: Array.from({ length: 10 }, (_, at) => ({ at, throughput, p50: p95 / 2, p95, p99: p95 * 2, max: p95 * 4 })),
    errorRate: 0,
    timeToFinalP95Ms: 3,
    dropped: 0,
    iterationMeanMs: p95 / 2,
    vusMax: 200,
    vusPeak: 10,
    vusExhausted: false,
    generatorCores: 0.5,
    targetCpuPerRequestUs: 30,
    thresholds: [
      { slo: 'p95Ms', metric: 'http_req_duration{op:requestToPay}', expression: 'p(95)<250', observed: `p(95)=${p95}`, passed: held },
      { slo: 'maxErrorRate', metric: 'http_req_failed{op:requestToPay}', expression: 'rate<=0.01', observed: 'value=0', passed: true },
    ],
    ...overrides,
  };
}

export function reportOf(steps: Step[], name = 'request-to-pay'): CapacityReport {
  const outcome = { steps, ended: 'narrowed' as const };
  return {
    generatedAt: '2026-11-23T20:00:00.000Z',
    durationSeconds: 60,
    target: 'the embedded reference sandbox (a fresh one per step)',
    mix: { name, operations: { requestToPay: 1 } },
    slos: Object.fromEntries(
      ['p95Ms', 'p99Ms', 'maxErrorRate', 'maxDroppedIterations', 'maxLostTransactions', 'maxUnexpected401', 'timeToFinalP95Ms'].map((n) => [
        n,
        { value: 1, setting: 'LOAD_SLO_X', describe: n },
      ]),
    ),
    search: { ...SETTINGS, vus: 200, followShare: 0.05, segments: 1, warmupSeconds: 0, rampSeconds: 2, ended: 'narrowed' },
    machine: { cpus: 2, model: 'cpu', loadAverageAtStart: 1, node: 'v20' },
    verdict: verdictOf(outcome, SETTINGS),
    knee: kneeOf(steps, 3),
    saturation: saturationOf(steps),
    steps,
  };
}
