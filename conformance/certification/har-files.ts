import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { harOf } from '../../harness/reproduction/har.ts';
import type { ScenarioEvidence } from './evidence.ts';

/** Where a run's HAR files go, inside its conformance reports (so the bundle and the leak scan take them in). */
export const HAR_FOLDER = 'har';

/**
 * Writes one HAR 1.2 file per scenario that exchanged anything with the target: <reports>/har/<feature>-<line>-<name>.har,
 * from the redacted evidence (harness/reproduction/har.ts). The folder holds this run's files only. Returns their paths.
 */
export function writeHarFiles(
  reportsDir: string,
  scenarios: readonly ScenarioEvidence[],
  creator: { name: string; version: string },
  now: Date,
): string[] {
  const dir = join(reportsDir, HAR_FOLDER);
  rmSync(dir, { recursive: true, force: true });
  const written: string[] = [];
  const taken = new Set<string>();
  for (const scenario of scenarios) {
    if (scenario.exchanges.length === 0) continue;
    // Two examples of one outline row can share a line: the second gets -2, and so on.
    const name = harFileName(scenario);
    let unique = name;
    for (let n = 2; taken.has(unique); n += 1) unique = `${name}-${n}`;
    taken.add(unique);
    const file = join(dir, `${unique}.har`);
    mkdirSync(dir, { recursive: true });
    const har = harOf({ title: `${scenario.feature} › ${scenario.name}`, exchanges: scenario.exchanges }, creator, now.toISOString());
    writeFileSync(file, `${JSON.stringify(har, null, 2)}\n`);
    written.push(file);
  }
  return written;
}

/** A file name from the feature file, the line and the scenario's name: unique in a run, and plain ASCII. */
export function harFileName(scenario: Pick<ScenarioEvidence, 'uri' | 'line' | 'name' | 'id'>): string {
  const words = (text: string) =>
    text
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80);
  return [words(basename(scenario.uri, '.feature')), scenario.line ?? words(scenario.id), words(scenario.name)]
    .filter((part) => part !== '')
    .join('-');
}
