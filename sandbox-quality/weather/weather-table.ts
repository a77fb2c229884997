import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runConformanceProcess } from '../../conformance/runner/child-run.ts';
import type { ProfileName } from '../../core/profiles.ts';
import { SPEC_LEGAL_CONDITIONS } from '../../sandbox/domain/chaos-conditions.ts';
import { FAULTS, runCatching, type FaultName } from '../faults/faults.ts';
import { describeWeather, startWeatheredTarget, type Weather } from './targets.ts';

/**
 * `npm run mutation`'s weather table (issue 31): the suite under each spec-legal chaos condition alone and under all
 * together, over several seeds, in both profiles, and a conforming server the project did not write behind the
 * weather proxy the project did not write: each run must exit 0 or 2, never 1. A sample of deviations, one a feature,
 * under `--chaos all` must still exit 1.
 */
export interface WeatherRun {
  weather: string;
  /** What the run is for: a conforming target (must not fail) or a deviation (must). */
  expect: 'conforms' | 'caught';
  profile: ProfileName;
  exitCode: number | null;
  passed: number;
  failed: string[];
  notTested: number;
  applied: Record<string, number>;
  durationMs: number;
  ok: boolean;
}

const PROFILES: readonly ProfileName[] = ['spec', 'mtn-sandbox'];
/** The proxy's share of each condition, with latency more often: realistic weather, as issue 31 measured it. */
export const PROXY_CONDITIONS = 'all=0.05,latency=0.2';
/** The python proxy's outages: 2 s of 503s (or 500s where §4 lists them) every 20 s, for every operation alike. */
export const OUTAGES = { everyS: 20, lengthS: 2 };

/** The deviations tried under weather: the first of each feature, in the profile that catches it. */
function deviationSample(): FaultName[] {
  const seen = new Set<string>();
  return (Object.keys(FAULTS) as FaultName[]).filter((name) => {
    const { feature } = FAULTS[name];
    if (seen.has(feature) || runCatching(FAULTS[name]).strict) return false;
    seen.add(feature);
    return true;
  });
}

/** Every run of the table, for `seeds` seeds (1 … seeds). */
export function weatherRuns(seeds: number): { weather: Weather; expect: WeatherRun['expect'] }[] {
  const seedList = Array.from({ length: seeds }, (_, i) => i + 1);
  const chaos = PROFILES.flatMap((profile) =>
    [...SPEC_LEGAL_CONDITIONS, 'all'].flatMap((condition) =>
      seedList.map((seed) => ({ weather: { kind: 'chaos', chaos: condition, seed, profile } as Weather, expect: 'conforms' as const })),
    ),
  );
  // Both proxies the project did not write: the Go one, and the Python one with its short server-wide outages.
  const proxy = PROFILES.flatMap((profile) =>
    seedList.flatMap((seed) => [
      { weather: { kind: 'proxy', conditions: PROXY_CONDITIONS, seed, profile } as Weather, expect: 'conforms' as const },
      {
        weather: { kind: 'proxy', proxy: 'python', conditions: PROXY_CONDITIONS, bursts: OUTAGES, seed, profile } as Weather,
        expect: 'conforms' as const,
      },
    ]),
  );
  const deviations = deviationSample().map((deviation) => ({
    weather: { kind: 'chaos', chaos: 'all', seed: 1, profile: runCatching(FAULTS[deviation]).profile, deviation } as Weather,
    expect: 'caught' as const,
  }));
  return [...chaos, ...proxy, ...deviations];
}

interface Summary {
  totals: Record<string, number>;
  scenarios: { scenario: string; uri: string; verdict: string }[];
}

/** One run of the suite against a target under weather; the reports go to `reportsDir`. */
export async function runUnderWeather(weather: Weather, expect: WeatherRun['expect'], reportsDir: string): Promise<WeatherRun> {
  rmSync(reportsDir, { recursive: true, force: true });
  const started = Date.now();
  const target = await startWeatheredTarget(weather);
  let code: number | null;
  let applied: Record<string, number>;
  try {
    // No reruns: what absorbs the weather is the careful client, not a second attempt at the scenario.
    const run = await runConformanceProcess(
      ['--reports', reportsDir, '--parallel', '2'],
      { MOMO_RETRIES: '0', ...target.env },
      10 * 60_000,
    );
    code = run.timedOut ? null : run.code;
    applied = target.applied();
  } finally {
    await target.stop();
  }
  const file = join(reportsDir, 'summary.json');
  const summary = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Summary) : undefined;
  const failed = (summary?.scenarios ?? [])
    .filter((s) => s.verdict === 'failed')
    .map((s) => `${s.uri.replace(/^features\//, '')}: ${s.scenario}`);
  const ok = expect === 'conforms' ? (code === 0 || code === 2) && failed.length === 0 : code === 1 && failed.length > 0;
  return {
    weather: describeWeather(weather),
    expect,
    profile: weather.profile,
    exitCode: code,
    passed: summary?.totals.passed ?? 0,
    failed,
    notTested: summary?.totals['not tested'] ?? 0,
    applied,
    durationMs: Date.now() - started,
    ok,
  };
}

export function weatherTable(runs: readonly WeatherRun[], when: string, seeds: number): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  const conforming = runs.filter((r) => r.expect === 'conforms');
  const deviations = runs.filter((r) => r.expect === 'caught');
  return [
    `Measured ${when.slice(0, 10)} by \`npm run mutation\` (its weather runs; seeds 1–${seeds}): ` +
      `**${conforming.filter((r) => r.ok).length} of ${conforming.length} runs under spec-legal weather exited 0 or 2 with no scenario failed**, ` +
      `**${deviations.filter((r) => r.ok).length} of ${deviations.length} deviations under \`--chaos all\` still exited 1**.`,
    '',
    '| weather | profile | expected | exit | passed | failed | not tested | conditions met | seconds |',
    '|---|---|---|---|---|---|---|---|---|',
    ...runs.map(
      (r) =>
        `| ${cell(r.weather)} | ${r.profile} | ${r.expect === 'conforms' ? '0 or 2' : '1'} | ${r.ok ? r.exitCode : `**${r.exitCode}**`} | ${r.passed} | ${r.failed.length === 0 ? 0 : cell(`${r.failed.length}: ${r.failed.slice(0, 2).join('; ')}`)} | ${r.notTested} | ${cell(
          Object.entries(r.applied)
            .map(([name, n]) => `${name} ×${n}`)
            .join(', ') || '—',
        )} | ${(r.durationMs / 1000).toFixed(1)} |`,
    ),
  ].join('\n');
}

const BEGIN = '<!-- weather:begin (written by npm run mutation; do not edit by hand) -->';
const END = '<!-- weather:end -->';

/** Writes the weather table into its own place in the doc, leaving the other tables as they are. */
export function writeWeatherTable(doc: string, table: string): void {
  const section = `${BEGIN}\n${table}\n${END}`;
  const current = existsSync(doc) ? readFileSync(doc, 'utf8') : '';
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  writeFileSync(
    doc,
    start >= 0 && end > start
      ? `${current.slice(0, start)}${section}${current.slice(end + END.length)}`
      : `${current.trimEnd()}\n\n${section}\n`,
  );
}
