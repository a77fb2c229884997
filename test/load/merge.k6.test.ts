import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedSandbox } from '../../sandbox/start.ts';
import { runLoad } from '../../load/runner/load-command.ts';
import { mergeSamples, thresholdsOfSummaries } from '../../load/runner/merge.ts';
import type { K6Summary } from '../../load/runner/summary.ts';
import { targetEnvironment } from './support/target-environment.ts';

const ITERATIONS = 60;
const SEQUENCES = { 1: ['0:1'], 2: ['0:1/2', '1/2:1'], 4: ['0:1/4', '1/4:1/2', '1/2:3/4', '3/4:1'] } as const;

/** The test's own reading of the samples: every duration of the load (not setup) of one operation, from all the files at once. */
function durationsOf(files: string[], op: string): number[] {
  const values: number[] = [];
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line) continue;
      const sample = JSON.parse(line) as { type: string; metric: string; data: { value: number; tags?: Record<string, string> } };
      if (sample.type === 'Point' && sample.metric === 'http_req_duration' && sample.data.tags?.scenario && sample.data.tags.op === op)
        values.push(sample.data.value);
    }
  }
  return values.sort((a, b) => a - b);
}

/** k6's percentile: linear interpolation at rank p(n-1), written here apart from the merge's. */
function p(sorted: number[], q: number): number {
  const rank = q * (sorted.length - 1);
  const low = Math.floor(rank);
  return sorted[low]! + (sorted[Math.min(low + 1, sorted.length - 1)]! - sorted[low]!) * (rank - low);
}

test("a run split into 2 and into 4 processes merges to the single run's counts, with the percentiles of all its samples", {
  timeout: 240_000,
}, async () => {
  const running = await startEmbeddedSandbox();
  const env = {
    ...targetEnvironment(running.baseUrl),
    LOAD_OPERATIONS: 'requestToPay',
    LOAD_VUS: '4',
  };
  try {
    const merged: Record<number, Awaited<ReturnType<typeof mergeSamples>>> = {};
    for (const [n, segments] of Object.entries(SEQUENCES)) {
      const dir = mkdtempSync(join(tmpdir(), `momo-merge-${n}-`));
      const sequence = n === '1' ? [] : ['--segment-sequence', ['0', ...segments.map((s) => s.split(':')[1])].join(',')];
      const files = segments.map((_, i) => join(dir, `samples-${i}.json`));
      const runs = await Promise.all(
        segments.map((segment, i) =>
          runLoad({
            argv: [
              'creation-throughput',
              '--iterations',
              String(ITERATIONS),
              ...(n === '1' ? [] : ['--segment', segment, ...sequence]),
              '--samples',
              files[i]!,
              '--reports',
              join(dir, `reports-${i}`),
            ],
            env,
            log: () => {},
            k6Output: 'pipe',
          }),
        ),
      );
      for (const run of runs) assert.equal(run.code, 0, run.output);
      // The segments' summaries name every threshold, those per operation too, for the merge to judge.
      merged[Number(n)] = await mergeSamples(files, {
        thresholds: thresholdsOfSummaries(segments.map((_, i) => join(dir, `reports-${i}`, 'summary.json'))),
      });
      const summary = merged[Number(n)]!;

      // Counts: the iterations and the requests to pay of the configured run, however it is split.
      assert.equal(summary.metrics.iterations?.count, ITERATIONS, `${n} process(es): iterations`);
      assert.equal(summary.metrics['http_reqs{op:requestToPay}']?.count, ITERATIONS, `${n} process(es): requests to pay`);
      assert.equal(summary.metrics['http_req_failed{op:requestToPay}']?.fails, ITERATIONS, `${n} process(es): answered as documented`);
      assert.ok(
        summary.thresholds.every((t) => t.passed),
        "the scripts' thresholds, judged over the merged samples, held",
      );
      assert.ok(
        summary.thresholds.some((t) => t.metric === 'http_req_duration{op:requestToPay}' && t.expression.startsWith('p(95)')),
        'the latency SLO per operation is judged',
      );

      // Percentiles: those of every sample of every file, computed here independently.
      const all = durationsOf(files, 'requestToPay');
      assert.equal(all.length, ITERATIONS);
      const trend = summary.metrics['http_req_duration{op:requestToPay}']!;
      for (const [stat, q] of [
        ['med', 0.5],
        ['p(90)', 0.9],
        ['p(95)', 0.95],
        ['p(99)', 0.99],
      ] as const) {
        assert.ok(Math.abs(trend[stat]! - p(all, q)) < 1e-9, `${n} process(es): ${stat} ${trend[stat]} = ${p(all, q)}`);
      }
      assert.equal(trend.max, all.at(-1));

      if (n === '1') {
        // On one process the merge agrees with k6's own summary.
        const own = JSON.parse(readFileSync(join(dir, 'reports-0', 'summary.json'), 'utf8')) as K6Summary;
        const k6Trend = own.metrics['http_req_duration{op:requestToPay}'] as Record<string, number>;
        assert.ok(Math.abs(k6Trend['p(95)']! - trend['p(95)']!) < 1e-6, `k6 ${k6Trend['p(95)']} = merge ${trend['p(95)']}`);
      }
    }
    // Every request of the load, but the tokens each VU fetches once (so as many as there are VUs that ran), is the same.
    const load = (n: number) =>
      (merged[n]!.metrics.http_reqs?.count ?? 0) - (merged[n]!.metrics['http_reqs{op:createAccessToken}']?.count ?? 0);
    assert.equal(load(2), load(1), '2 processes: the same requests as one (setup() left out)');
    assert.equal(load(4), load(1), '4 processes: the same requests as one');
  } finally {
    await running.close();
  }
});
