/**
 * Every expectation of the harness stands on sources, and a finding weighs as much as the weakest of them: its check's
 * rule, its expected value's, and each premise's (harness/checks/premises.ts). A clause that says "not shown", or the
 * live notes, can never make a finding definite. This walks every place an expectation takes a source from (each
 * check's rule and values, each premise, each refusal case, the catalogue's statuses and codes, the record schemas
 * field by field, the profiles' differences) and every step module, and holds each to that.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { CHECKS, CHECK_NAMES, FAMILIES, finding, restingOn, severityOfFinding, type Basis } from '../../harness/checks/index.ts';
import { PREMISES, PREMISE_NAMES, premiseSource } from '../../harness/checks/premises.ts';
import { REFUSALS } from '../../harness/checks/refusals.ts';
import { codeSourceOf, statusSourceOf } from '../../harness/checks/contract.ts';
import { DIFFERENCES, PROFILES } from '../../core/profiles.ts';
import { OPERATION_IDS, OPERATIONS } from '../../core/catalogue/operations.ts';
import { productsOf } from '../../core/catalogue/routes.ts';
import { indefinite, observed, reading, severityOf, spec, type RunStrictness, type Source } from '../../core/sources.ts';
import { schemaDocuments } from '../../core/validation/schemas.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const RUNS: RunStrictness[] = PROFILES.flatMap((profile) => [false, true].map((strict) => ({ profile, strict })));

/** Every source an expectation of the harness can take, with where it is written. */
function everySource(): { where: string; source: Source }[] {
  const out: { where: string; source: Source }[] = [];
  for (const name of CHECK_NAMES) {
    const check = CHECKS[name] as { source: Source; values?: Record<string, Source> };
    out.push({ where: `the rule of the check ${name}`, source: check.source });
    for (const [value, source] of Object.entries(check.values ?? {}))
      out.push({ where: `the value ${value} of the check ${name}`, source });
  }
  for (const name of PREMISE_NAMES)
    for (const profile of PROFILES) out.push({ where: `the premise ${name} (${profile})`, source: premiseSource(PREMISES[name], profile) });
  for (const [name, source] of Object.entries(REFUSALS)) out.push({ where: `the refusal case ${name}`, source });
  for (const [name, difference] of Object.entries(DIFFERENCES))
    for (const profile of PROFILES)
      out.push({ where: `the ${profile} side of the difference ${name}`, source: difference.sources[profile] });
  for (const id of OPERATION_IDS)
    for (const product of productsOf(id))
      for (const status of Object.keys(OPERATIONS[id].responses).map(Number)) {
        out.push({ where: `status ${status} of ${id} under ${product}`, source: statusSourceOf(id, product, [status]) });
        out.push({ where: `the codes of ${status} of ${id} under ${product}`, source: codeSourceOf(id, product, status) });
      }
  for (const document of schemaDocuments) {
    for (const [pointer, source] of xSources(document, '')) out.push({ where: `${document.$id}#${pointer}`, source });
  }
  return out;
}

function xSources(value: unknown, at: string): [string, Source][] {
  if (typeof value !== 'object' || value === null) return [];
  const found: [string, Source][] = [];
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'x-source') found.push([at || '/', inner as Source]);
    else found.push(...xSources(inner, `${at}/${key}`));
  }
  return found;
}

test('no definite source rests on a clause that says "not shown", or on the live notes', () => {
  const sources = everySource();
  assert.ok(sources.length > 300, `${sources.length} sources walked`);
  const wrong = sources.flatMap(({ where, source }) => {
    if (source.kind !== 'spec') return [];
    const why = indefinite(source.clause);
    return why ? [`${where}: definite, but rests on ${why}: ${source.clause}`] : [];
  });
  assert.deepEqual(wrong, []);
});

test('an observation cites the live notes or the provider; a reading says why', () => {
  const wrong = everySource().flatMap(({ where, source }) => {
    if (source.kind === 'observed' && !/real-api-notes|beyond the spec|provider|live/i.test(source.note))
      return [`${where}: observed, citing neither the notes nor the provider: ${source.note}`];
    if (source.kind === 'reading' && source.reading.trim().length < 20) return [`${where}: a reading with no reason: ${source.reading}`];
    return [];
  });
  assert.deepEqual(wrong, []);
});

test('a definite source cannot even be written on "not shown" or the notes: spec() refuses it where it is written', () => {
  assert.throws(() => spec('§4.2 #8: the format of the body is not shown'), /cannot rest on what the spec says is "not shown"/);
  assert.throws(() => spec('real-api-notes, status records: the record'), /cannot rest on the live notes/);
  assert.throws(() => spec('§6: as the live service does [observed]'), /the live notes/);
  assert.doesNotThrow(() => spec('§7 rule 1: a reused reference id gives 409'));
});

test('nothing writes a definite source but spec() itself, which refuses "not shown" and the notes where it is written', () => {
  const folders = ['core', 'harness', 'steps', 'conformance'];
  const offences = folders.flatMap((folder) =>
    stepFiles(join(ROOT, folder))
      .filter((file) => !file.endsWith('core/sources.ts'))
      .flatMap((file) => {
        const text = readFileSync(file, 'utf8');
        return /kind:\s*'spec'\s*,\s*clause/.test(text) ? [`${file.slice(ROOT.length)} builds { kind: 'spec', clause } itself`] : [];
      }),
  );
  assert.deepEqual(offences, []);
});

test('every check belongs to one family, and every family module defines the checks it makes', () => {
  const families = Object.entries(FAMILIES);
  assert.deepEqual([...families.flatMap(([, names]) => names)].sort(), [...CHECK_NAMES].sort());
  for (const [family] of families) {
    const text = readFileSync(join(ROOT, 'harness/checks', `${family}.ts`), 'utf8');
    assert.match(text, /as const satisfies Record<string, CheckDefinition>/, `${family}.ts defines its checks`);
  }
});

test('steps hold no check and no source: each finding, rule and premise they use is one declared in harness/checks', () => {
  const files = stepFiles(join(ROOT, 'steps'));
  assert.ok(files.length > 20, `${files.length} step files`);
  const offences = files.flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    const rel = file.slice(ROOT.length);
    return [
      ...[...text.matchAll(/\b(spec|observed|reading)\(\s*['"`]/g)].map((m) => `${rel}: writes a source of its own (${m[1]}(…))`),
      ...[...text.matchAll(/\b(findingOf|finding)\(\s*['"]/g)].map((m) => `${rel}: makes a finding itself (${m[1]}(…))`),
      ...(/from '[^']*core\/sources\.ts'/.test(text.replace(/import type [^;]+;/g, ''))
        ? [`${rel}: imports source makers from core/sources.ts`]
        : []),
    ];
  });
  assert.deepEqual(offences, []);
});

function stepFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? stepFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

const arbitrarySource: fc.Arbitrary<Source> = fc.oneof(
  fc.constant(spec('§7 rule 1')),
  fc.constant(observed('real-api-notes, a capture')),
  fc.constant(reading('our reading of an open point, with its reason')),
);
const arbitraryRun: fc.Arbitrary<RunStrictness> = fc.constantFrom(...RUNS);
const RANK = { warning: 0, failure: 1 } as const;

test("a finding weighs as much as the weakest of its check's rule, its value's source and its premises', in every run", () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...CHECK_NAMES.filter((name) => !('advisory' in CHECKS[name]))),
      fc.option(arbitrarySource, { nil: undefined }),
      fc.array(arbitrarySource, { maxLength: 3 }),
      arbitraryRun,
      (check, value, premiseSources, run) => {
        const raw = finding(check, { expected: 'x', received: 'y', ...(value ? { source: value } : {}) });
        const premises: Basis[] = premiseSources.map((source, i) => ({ on: `premise p${i}: something taken for granted`, source }));
        const weighed = restingOn(raw, premises, run);
        const under = [CHECKS[check].source, ...(value ? [value] : []), ...premiseSources];
        const weakest = Math.min(...under.map((s) => RANK[severityOf(s, run)]));
        assert.equal(RANK[severityOfFinding(weighed, run)], weakest);
        // And it says which source it weighs as much as.
        assert.equal(severityOf(weighed.source, run), severityOfFinding(weighed, run));
      },
    ),
  );
});

test('every value a check declares, and every premise, bounds the findings that rest on it, in every run', () => {
  for (const run of RUNS) {
    for (const name of CHECK_NAMES) {
      const check = CHECKS[name] as { source: Source; values?: Record<string, Source>; advisory?: true };
      if (check.advisory) continue;
      for (const [value, source] of Object.entries(check.values ?? {})) {
        const weighed = restingOn(finding(name, { expected: 'x', received: 'y', source }), [], run);
        const expected = Math.min(RANK[severityOf(source, run)], RANK[severityOf(check.source, run)]);
        assert.equal(RANK[severityOfFinding(weighed, run)], expected, `${name}.${value} in ${JSON.stringify(run)}`);
      }
      for (const premise of PREMISE_NAMES) {
        const source = premiseSource(PREMISES[premise], run.profile);
        const weighed = restingOn(finding(name, { expected: 'x', received: 'y' }), [{ on: `premise ${premise}`, source }], run);
        assert.ok(
          RANK[severityOfFinding(weighed, run)] <= RANK[severityOf(source, run)],
          `${name} on ${premise} in ${JSON.stringify(run)}`,
        );
      }
    }
  }
});
