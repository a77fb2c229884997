import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCapacity } from '../../load/runner/capacity.ts';
import { validatorFor } from '../../core/validation/schemas.ts';
import { parseXml } from '../support/reports.ts';

const env = { PATH: process.env.PATH, HOME: process.env.HOME };

// Short searches against the embedded sandbox (127.0.0.1), each bounded by --max-duration.
test('a short capacity search of the mixed scenario, split over 2 k6 processes, writes a page, capacity.json and JUnit', { timeout: 120_000 }, async () => {
  const reports = mkdtempSync(join(tmpdir(), 'momo-capacity-'));
  const lines: string[] = [];
  const { code, report } = await runCapacity({ argv: ['mixed', '--start', '20', '--max-rate', '40', '--step-duration', '2', '--max-duration', '40', '--vus', '20', '--segments', '2', '--reports', reports], env, log: (line) => lines.push(line) });
  assert.equal(code, 0, lines.join('\n'));
  assert.ok(report);
  assert.deepEqual(report.steps.map((s) => s.rate), [20, 40]);
  assert.equal(report.search.ended, 'max-rate');
  assert.match(report.verdict.sentence, /^At least 40\/s: every rate measured met the SLOs/);
  assert.ok(report.steps.every((s) => s.requests > 0 && s.timeToFinalP95Ms !== null && s.generatorCores >= 0));
  assert.ok(report.steps[0]!.thresholds.some((t) => t.metric === 'http_req_duration{op:refund}'), 'judged over the merged samples, SLOs per operation included');
  assert.ok(lines.some((l) => /^\[capacity \d+s\/40s\] step 1: 20\/s/.test(l)), 'progress lines');
  const json = JSON.parse(readFileSync(join(reports, 'capacity.json'), 'utf8'));
  assert.ok(validatorFor('capacity-report')(json));
  parseXml(readFileSync(join(reports, 'junit.xml'), 'utf8'));
  assert.ok(existsSync(join(reports, 'index.html')));
});

test('a search whose SLO no rate can meet ends with exit 1, naming the SLO', { timeout: 120_000 }, async () => {
  const reports = mkdtempSync(join(tmpdir(), 'momo-capacity-'));
  const lines: string[] = [];
  const { code, report } = await runCapacity({ argv: ['token', '--slo', 'p95=0.001', '--confirm-misses', '0', '--start', '4', '--step-duration', '1', '--max-duration', '30', '--vus', '4', '--reports', reports], env, log: (line) => lines.push(line) });
  assert.equal(code, 1, lines.join('\n'));
  assert.equal(report?.verdict.capacity, null);
  assert.match(report!.verdict.sentence, /^No rate met the SLOs, down to 1\/s: p95 latency/);
  assert.equal(report!.slos.p95Ms!.value, 0.001);
});
