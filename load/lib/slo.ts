import { number } from './config.ts';
import { SLO_SETTINGS, type SloName } from './slo-settings.ts';

/**
 * The service-level objectives the load tests hold the target to, as named settings. A failed threshold
 * fails the run (k6 exits 99, npm run load exits 1). The settings, their names and defaults are in slo-settings.ts.
 */
export const SLO = Object.fromEntries(
  Object.entries(SLO_SETTINGS).map(([name, setting]) => [name, number(setting.env, setting.fallback)]),
) as Record<SloName, number>;

type Thresholds = Record<string, string[]>;

/** Latency of the calls of one operation (tagged op:<name>). */
export function latencyOf(operation: string): Thresholds {
  return { [`http_req_duration{op:${operation}}`]: [`p(95)<${SLO.p95Ms}`, `p(99)<${SLO.p99Ms}`] };
}

/**
 * The error rate of one operation's calls (tagged op:<name>). Its counts are also how a run reports the
 * creations the target accepted (load/runner/summary.ts): k6 counts every call anyway, and a counter of our own
 * would add a metric sample to every iteration, 7% of the generator's instructions (docs/benchmarks.md).
 */
export function errorRateOf(operation: string): Thresholds {
  return { [`http_req_failed{op:${operation}}`]: [`rate<=${SLO.maxErrorRate}`] };
}

/** What every run must hold: answers as documented, valid bodies, an honest open model. */
export function correctness(): Thresholds {
  return {
    http_req_failed: [`rate<=${SLO.maxErrorRate}`],
    // Every body is validated under load, and none may depart from its schema.
    momo_schema_violations: ['count==0'],
    dropped_iterations: [`count<=${SLO.maxDroppedIterations}`],
  };
}

export function noLostTransactions(): Thresholds {
  return { momo_lost_transactions: [`count<=${SLO.maxLostTransactions}`] };
}

export function noUnexpected401(): Thresholds {
  return { momo_unexpected_401: [`count<=${SLO.maxUnexpected401}`] };
}

export function completionWithin(): Thresholds {
  return { momo_time_to_final: [`p(95)<${SLO.timeToFinalP95Ms}`] };
}
