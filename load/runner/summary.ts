import { renderJunit, type JunitCase } from '../../core/junit.ts';
import { escapeMarkup as xml } from '../../core/report-text.ts';
/** The parts of k6's --summary-export file that the reports use. */
export interface K6Summary {
  metrics: Record<string, { thresholds?: Record<string, boolean>; [value: string]: unknown }>;
  root_group?: { checks?: Record<string, { name: string; passes: number; fails: number }> };
  setup_data?: unknown;
}

export interface ThresholdResult {
  metric: string;
  expression: string;
  /** k6 marks a threshold true when it was crossed. */
  passed: boolean;
  observed: string;
}

export function thresholdResults(summary: K6Summary): ThresholdResult[] {
  const results: ThresholdResult[] = [];
  for (const [metric, values] of Object.entries(summary.metrics)) {
    for (const [expression, crossed] of Object.entries(values.thresholds ?? {})) {
      const observed = Object.entries(values)
        .filter(([k]) => k !== 'thresholds')
        .map(([k, v]) => `${k}=${typeof v === 'number' ? Number(v.toFixed(3)) : String(v)}`)
        .join(' ');
      results.push({ metric, expression, passed: !crossed, observed });
    }
  }
  return results.sort((a, b) => a.metric.localeCompare(b.metric) || a.expression.localeCompare(b.expression));
}

export interface OperationCount {
  operation: string;
  accepted: number;
  refused: number;
}

/**
 * Calls per operation, from k6's own http_req_failed{op:<operation>} (a Rate: its fails are the calls answered
 * as documented). The scenarios count creations this way rather than with a counter of their own, which would
 * cost a metric sample per iteration (load/lib/slo.ts, errorRateOf).
 */
export function callsByOperation(summary: K6Summary): OperationCount[] {
  return Object.entries(summary.metrics).flatMap(([name, values]) => {
    const operation = /^http_req_failed\{op:([^}]+)\}$/.exec(name)?.[1];
    return operation === undefined ? [] : [{ operation, accepted: Number(values.fails ?? 0), refused: Number(values.passes ?? 0) }];
  });
}

/**
 * setup() returns the run's API users, keys included, and k6 writes that into the summary export. The
 * keys are secrets: the data is dropped before the file is kept.
 */
export function withoutSetupData(summary: K6Summary): K6Summary {
  const { setup_data: _dropped, ...rest } = summary;
  return rest;
}

/**
 * A plain HTML report of thresholds and metrics, for runs too short for k6's dashboard, which needs at
 * least two sampling periods to draw its graphs.
 */
export function htmlReport(scenario: string, summary: K6Summary): string {
  const rows = thresholdResults(summary).map(
    (t) =>
      `<tr class="${t.passed ? 'ok' : 'bad'}"><td>${xml(t.metric)}</td><td>${xml(t.expression)}</td><td>${t.passed ? 'held' : 'CROSSED'}</td><td>${xml(t.observed)}</td></tr>`,
  );
  const metrics = Object.entries(summary.metrics)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([name, v]) =>
        `<tr><td>${xml(name)}</td><td>${xml(
          Object.entries(v)
            .filter(([k]) => k !== 'thresholds')
            .map(([k, x]) => `${k}=${typeof x === 'number' ? Number(x.toFixed(3)) : String(x)}`)
            .join(' '),
        )}</td></tr>`,
    );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Load: ${xml(scenario)}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}tr.ok td:nth-child(3){color:#176117}tr.bad td:nth-child(3){color:#a11;font-weight:bold}</style></head>
<body><h1>Load scenario ${xml(scenario)}</h1><p>The run was too short for k6's web dashboard, which needs at least two sampling periods to draw graphs; this page lists its thresholds and metrics.</p>
<h2>Thresholds (SLOs)</h2><table><tr><th>metric</th><th>threshold</th><th>result</th><th>observed</th></tr>${rows.join('')}</table>
<h2>Metrics</h2><table><tr><th>metric</th><th>values</th></tr>${metrics.join('')}</table></body></html>
`;
}

/** JUnit XML for CI: one test case per threshold (the SLOs) and one per check. */
export function junitReport(scenario: string, summary: K6Summary, durationSeconds: number): string {
  const thresholds: JunitCase[] = thresholdResults(summary).map((t) => ({
    classname: `load.${scenario}.thresholds`,
    name: `${t.metric}: ${t.expression}`,
    ...(t.passed ? {} : { failure: { message: `threshold crossed: ${t.metric} ${t.expression}`, text: t.observed } }),
  }));
  const checks: JunitCase[] = Object.values(summary.root_group?.checks ?? {}).map((c) => ({
    classname: `load.${scenario}.checks`,
    name: c.name,
    ...(c.fails === 0 ? {} : { failure: { message: `${c.fails} of ${c.passes + c.fails} failed` } }),
  }));
  return renderJunit('MoMo load', [{ name: `load ${scenario}`, cases: [...thresholds, ...checks], timeSeconds: durationSeconds }]);
}
