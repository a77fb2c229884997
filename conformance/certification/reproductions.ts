import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TargetBases } from '../../core/catalogue/routes.ts';
import { reproductionScriptOf } from '../../harness/reproduction/script.ts';
import type { ScenarioEvidence } from './evidence.ts';
import { harFileName } from './har-files.ts';

/** Where a run's reproduction scripts go, inside its conformance reports (so the bundle and the leak scan take them in). */
export const REPRODUCTION_FOLDER = 'reproduce';

/** A failed scenario's reproduction: the script (harness/reproduction/script.ts) and its file, relative to the conformance reports. */
export interface Reproduction {
  file: string;
  script: string;
}

/** Where the run found its target, as the scripts default to it, and the host callbacks were registered for. */
export interface ReproductionTarget {
  bases: TargetBases;
  callbackHost: string;
}

/** The reproduction of each scenario that failed to conform, by scenario id, named as its HAR file is. */
export function reproductionsOf(scenarios: readonly ScenarioEvidence[], target: ReproductionTarget): Map<string, Reproduction> {
  const reproductions = new Map<string, Reproduction>();
  const taken = new Set<string>();
  for (const scenario of scenarios) {
    if (scenario.verdict !== 'failed') continue;
    const script = reproductionScriptOf({
      title: `${scenario.feature} › ${scenario.name}`,
      exchanges: scenario.exchanges,
      ...(scenario.failure?.exchange !== undefined ? { failedAt: scenario.failure.exchange } : {}),
      findings: scenario.failure?.findings ?? [],
      ...target,
    });
    if (script === undefined) continue;
    const name = harFileName(scenario);
    let unique = name;
    for (let n = 2; taken.has(unique); n += 1) unique = `${name}-${n}`;
    taken.add(unique);
    reproductions.set(scenario.id, { file: `${REPRODUCTION_FOLDER}/${unique}.sh`, script });
  }
  return reproductions;
}

/** Writes the scripts, executable, into <reports>/reproduce: this run's only. */
export function writeReproductions(reportsDir: string, reproductions: Iterable<Reproduction>): void {
  rmSync(join(reportsDir, REPRODUCTION_FOLDER), { recursive: true, force: true });
  for (const { file, script } of reproductions) {
    const path = join(reportsDir, file);
    mkdirSync(join(reportsDir, REPRODUCTION_FOLDER), { recursive: true });
    writeFileSync(path, script);
    chmodSync(path, 0o755);
  }
}
