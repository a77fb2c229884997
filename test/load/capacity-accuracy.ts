/**
 * The benchmark of npm run capacity against targets of known capacity (docs/benchmarks.md, "Capacity against
 * targets of known capacity"): for each case, a fresh target whose one worker serves R requests a second
 * (support/known-capacity-target.ts), searched twice with the command's defaults but for those the case names.
 *
 *   npx tsx test/load/capacity-accuracy.ts                    # every case, twice: about 30 minutes
 *   npx tsx test/load/capacity-accuracy.ts --case rtp-150     # one case
 *   npx tsx test/load/capacity-accuracy.ts --chart docs/capacity-chart.svg   # also keep the first run's chart
 *
 * Prints one row per search and the checks of the issue: each capacity within 0.9 R to 1.05 R, the two runs of a
 * case within 5% of each other, no step's throughput above R by more than 5%. Every run's reports go to
 * reports/benchmarks/capacity-accuracy/<case>-<run>/, the rows to reports/benchmarks/capacity-accuracy.json.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseCommandLine } from '../../core/command-line.ts';
import { runCapacity } from '../../load/runner/capacity.ts';
import { startKnownCapacityTarget, type Bottleneck } from './support/known-capacity-target.ts';

interface Case {
  name: string;
  mix: string;
  ratePerSecond: number;
  bottleneck: Bottleneck;
  /** Options of npm run capacity besides the defaults. */
  argv: string[];
}

const CASES: Case[] = [
  // The case: with 200 VUs each fetching its token in the step, request to pay came out at 0.63 R.
  { name: 'rtp-150', mix: 'request-to-pay', ratePerSecond: 150, bottleneck: 'every-operation', argv: [] },
  { name: 'rtp-150-20vus', mix: 'request-to-pay', ratePerSecond: 150, bottleneck: 'every-operation', argv: ['--vus', '20'] },
  { name: 'rtp-360', mix: 'request-to-pay', ratePerSecond: 360, bottleneck: 'every-operation', argv: [] },
  { name: 'token-150', mix: 'token', ratePerSecond: 150, bottleneck: 'tokens', argv: [] },
  { name: 'token-360', mix: 'token', ratePerSecond: 360, bottleneck: 'tokens', argv: [] },
];

const RUNS = 2;

interface Row {
  case: string;
  run: number;
  mix: string;
  bottleneck: Bottleneck;
  ratePerSecond: number;
  vus: number;
  capacity: number | null;
  capacityShareOfR: number | null;
  /** The most the report said was answered in a window: of the mix, and every request. */
  highestThroughputShareOfR: number;
  highestRequestsShareOfR: number;
  /** The target's own count: the most it served in one whole second. */
  targetMostInASecondShareOfR: number;
  knee: string;
  saturation: string;
  steps: string;
  seconds: number;
  loadAverageAtStart: number;
}

async function runCase(c: Case, run: number, reportsRoot: string): Promise<Row> {
  const target = await startKnownCapacityTarget({ ratePerSecond: c.ratePerSecond, bottleneck: c.bottleneck });
  const reports = join(reportsRoot, `${c.name}-${run}`);
  const env = target.environment();
  const loadAverageAtStart = loadavg()[0]!;
  const started = Date.now();
  try {
    const { report } = await runCapacity({
      argv: [c.mix, ...c.argv, '--reports', reports],
      env,
      log: (line) => console.error(`  ${c.name}#${run} ${line}`),
    });
    if (!report) throw new Error(`the search of ${c.name} could not test`);
    const R = c.ratePerSecond;
    const vus = report.search.vus;
    return {
      case: c.name,
      run,
      mix: c.mix,
      bottleneck: c.bottleneck,
      ratePerSecond: R,
      vus,
      capacity: report.verdict.capacity,
      capacityShareOfR: report.verdict.capacity === null ? null : report.verdict.capacity / R,
      highestThroughputShareOfR: Math.max(...report.steps.map((s) => s.throughput)) / R,
      highestRequestsShareOfR: Math.max(...report.steps.map((s) => s.requestsPerSecond)) / R,
      targetMostInASecondShareOfR: target.stats().mostServedInASecond / R,
      knee:
        report.knee.above === null
          ? `none up to ${report.knee.below}`
          : `${report.knee.below}–${report.knee.above}${report.knee.confirmed ? '' : ' (once)'}`,
      saturation:
        report.saturation.fellBehindAt === null
          ? `kept up to ${report.saturation.keptUpTo}`
          : `${report.saturation.keptUpTo}–${report.saturation.fellBehindAt}, peak ${report.saturation.peakThroughput.toFixed(0)}`,
      steps: report.steps.map((s) => `${s.rate}${s.thresholds.every((t) => t.passed) ? '' : '✗'}`).join(' '),
      seconds: Math.round((Date.now() - started) / 1000),
      loadAverageAtStart: Math.round(loadAverageAtStart * 100) / 100,
    };
  } finally {
    await target.close();
  }
}

const pct = (share: number | null) => (share === null ? '–' : `${(share * 100).toFixed(1)}%`);

async function main(): Promise<number> {
  const { values } = parseCommandLine(process.argv.slice(2), {
    case: { type: 'string', multiple: true, value: '<name>', describe: 'only this case (repeatable)' },
    chart: { type: 'string', value: '<file>', describe: 'where the chart goes' },
    help: { type: 'boolean', describe: 'the usage text' },
  });
  if (values.help) {
    console.log(
      `Usage: npx tsx test/load/capacity-accuracy.ts [--case <name>]... [--chart <file>]\nCases: ${CASES.map((c) => c.name).join(', ')}`,
    );
    return 0;
  }
  const unknown = (values.case ?? []).filter((name) => !CASES.some((c) => c.name === name));
  if (unknown.length > 0) {
    console.error(`No case ${unknown.join(', ')}: the cases are ${CASES.map((c) => c.name).join(', ')}.`);
    return 2;
  }
  const cases = values.case ? CASES.filter((c) => values.case!.includes(c.name)) : CASES;
  const reportsRoot = resolve('reports/benchmarks/capacity-accuracy');
  mkdirSync(reportsRoot, { recursive: true });
  const rows: Row[] = [];
  for (const c of cases) {
    for (let run = 1; run <= RUNS; run += 1) {
      const row = await runCase(c, run, reportsRoot);
      rows.push(row);
      console.log(
        `| ${row.case} | ${row.run} | ${row.ratePerSecond} | ${row.vus} | ${row.capacity ?? '–'}/s | ${pct(row.capacityShareOfR)} | ${pct(row.highestThroughputShareOfR)} | ${pct(row.highestRequestsShareOfR)} | ${pct(row.targetMostInASecondShareOfR)} | ${row.knee} | ${row.saturation} | ${row.steps} | ${row.seconds} s | ${row.loadAverageAtStart} |`,
      );
    }
  }
  if (values.chart && cases.length > 0) copyFileSync(join(reportsRoot, `${cases[0]!.name}-1`, 'capacity.svg'), values.chart);
  writeFileSync(`${reportsRoot}.json`, `${JSON.stringify(rows, null, 2)}\n`);

  const failures: string[] = [];
  for (const row of rows) {
    if (row.capacityShareOfR === null || row.capacityShareOfR < 0.9 || row.capacityShareOfR > 1.05)
      failures.push(`${row.case}#${row.run}: capacity ${pct(row.capacityShareOfR)} of R, outside 90%–105%`);
    if (row.highestThroughputShareOfR > 1.05 || row.highestRequestsShareOfR > 1.05)
      failures.push(
        `${row.case}#${row.run}: a step reported ${pct(Math.max(row.highestThroughputShareOfR, row.highestRequestsShareOfR))} of R`,
      );
  }
  for (const c of cases) {
    const capacities = rows.filter((r) => r.case === c.name).map((r) => r.capacity ?? 0);
    const spread = (Math.max(...capacities) - Math.min(...capacities)) / Math.max(...capacities, 1);
    if (spread > 0.05) failures.push(`${c.name}: the runs found ${capacities.join(' and ')}/s, ${pct(spread)} apart`);
  }
  console.log(failures.length === 0 ? 'Every check held.' : `Checks missed:\n${failures.join('\n')}`);
  return failures.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    console.error(error.stack);
    process.exit(2);
  },
);
