/**
 * The requirement catalogue (requirements/momo-api.requirements.json) against the scenarios of features/:
 * every requirement a client can provoke is verified by a scenario that names it in a '@req:' tag, no tag
 * names an unknown requirement, and each unprovokable requirement says why and has no scenario.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { coverageProblems, readScenarios, scenariosByRequirement } from '../../conformance/certification/coverage.ts';
import { CatalogueError, loadRequirements, requirementIdsOf, type Requirement } from '../../conformance/certification/requirements.ts';
import { OPERATION_IDS } from '../../core/catalogue/operations.ts';
import { SPEC_FILE } from '../../conformance/certification/finished-run.ts';

test('every requirement of the catalogue is verified by a scenario or says why no client can provoke it', () => {
  const problems = coverageProblems(loadRequirements(), readScenarios());
  assert.ok(problems.length === 0, `The catalogue and the features disagree:\n  ${problems.join('\n  ')}`);
});

test('the requirement catalogue names only operations of the operation catalogue', () => {
  const operations = new Set<string>(OPERATION_IDS);
  const unknown = loadRequirements().flatMap((r) => r.operations.filter((o) => !operations.has(o)).map((o) => `${r.id}: ${o}`));
  assert.deepEqual(unknown, []);
});

test('requirementIdsOf reads the ids of @req: tags, each once, and ignores other tags', () => {
  assert.deepEqual(
    requirementIdsOf(['@collection', '@req:COL-RTP-DUPLICATE-409', '@smoke', '@req:ERR-SET-A', '@req:COL-RTP-DUPLICATE-409']),
    ['COL-RTP-DUPLICATE-409', 'ERR-SET-A'],
  );
  assert.deepEqual(requirementIdsOf(['@negative']), []);
});

test("an Examples block's tags name requirements for its own rows only", () => {
  const byId = scenariosByRequirement(readScenarios());
  const collectionBlock = byId.get('COL-BALANCE-TARGET-ENV-500') ?? [];
  assert.ok(collectionBlock.length > 0);
  assert.ok(
    collectionBlock.every((s) => s.tags.includes('@collection')),
    JSON.stringify(collectionBlock),
  );
});

const requirement = (id: string, extra: Partial<Requirement> = {}): Requirement => ({
  id,
  section: '§4.2 #2',
  text: 'A statement.',
  products: ['collection'],
  operations: ['requestToPay'],
  verification: 'scenario',
  ...extra,
});

test('the check names a requirement without a scenario, an unknown tag and an unprovokable requirement that a scenario names', () => {
  const requirements = [
    requirement('COL-RTP-ACCEPTED-202'),
    requirement('COL-RTP-NOBODY-VERIFIES'),
    requirement('COL-RTP-INTERNAL-ERROR-500', { verification: 'unprovokable', why: 'No request makes a service fail.' }),
  ];
  const scenarios = [
    {
      location: 'features/a.feature:3',
      name: 'A payment is accepted',
      tags: ['@collection', '@req:COL-RTP-ACCEPTED-202', '@req:COL-RTP-TYPO'],
    },
    { location: 'features/a.feature:9', name: 'A payment fails inside', tags: ['@req:COL-RTP-INTERNAL-ERROR-500'] },
  ];
  assert.deepEqual(coverageProblems(requirements, scenarios), [
    'COL-RTP-NOBODY-VERIFIES (§4.2 #2) has no scenario: tag the scenario that verifies it with @req:COL-RTP-NOBODY-VERIFIES',
    'COL-RTP-INTERNAL-ERROR-500 is listed as unprovokable, yet "A payment fails inside" (features/a.feature:9) names it: make it "scenario", or remove the tag',
    '@req:COL-RTP-TYPO names no requirement of the catalogue, in "A payment is accepted" (features/a.feature:3)',
  ]);
});

test('scenarios are read from feature files with the tags of their Examples blocks', () => {
  const dir = mkdtempSync(join(tmpdir(), 'features-'));
  try {
    writeFileSync(
      join(dir, 'pay.feature'),
      [
        '@collection',
        'Feature: Paying',
        '  @req:COL-RTP-ACCEPTED-202',
        '  Scenario Outline: A payment of <amount>',
        '    Given a partner',
        '',
        '    @req:COL-RTP-AMOUNT-STRING',
        '    Examples:',
        '      | amount |',
        '      | 0      |',
        '',
        '    Examples:',
        '      | amount |',
        '      | 5      |',
        '',
      ].join('\n'),
    );
    const scenarios = readScenarios(dir);
    assert.equal(scenarios.length, 2);
    assert.deepEqual(
      scenarios.map((s) => [s.name, s.tags]),
      [
        ['A payment of 0', ['@collection', '@req:COL-RTP-ACCEPTED-202', '@req:COL-RTP-AMOUNT-STRING']],
        ['A payment of 5', ['@collection', '@req:COL-RTP-ACCEPTED-202']],
      ],
    );
    assert.match(scenarios[0]!.location, /pay\.feature:4$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function catalogueFile(content: string): { file: string; done: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'catalogue-'));
  const file = join(dir, 'bad.requirements.json');
  writeFileSync(file, content);
  return { file, done: () => rmSync(dir, { recursive: true, force: true }) };
}

test('loadRequirements refuses a bad catalogue with an error that names the file and each problem', () => {
  const { file, done } = catalogueFile(
    JSON.stringify({
      spec: 'momo-api-spec.md',
      requirements: [
        {
          id: 'col-rtp-lower',
          section: '§4.2 #2',
          text: 'x',
          products: ['collection'],
          operations: ['requestToPay'],
          verification: 'scenario',
        },
        {
          id: 'COL-RTP-DUPLICATE-409',
          section: '§4.2 #2',
          text: 'x',
          products: ['payments'],
          operations: ['pay'],
          verification: 'unprovokable',
        },
      ],
    }),
  );
  try {
    assert.throws(
      () => loadRequirements(file),
      (error: Error) => {
        assert.ok(error instanceof CatalogueError);
        assert.ok(error.message.startsWith(`The requirement catalogue ${file} is wrong:`), error.message);
        assert.match(error.message, /\/requirements\/0\/id is invalid: Upper-case words and digits joined by hyphens/);
        assert.match(error.message, /\/requirements\/1 must have required property 'why'/);
        assert.match(
          error.message,
          /\/requirements\/1\/products\/0 must be one of "collection", "disbursement", "remittance", "provisioning"/,
        );
        assert.match(error.message, /\/requirements\/1\/operations\/0 must be one of "createApiUser"/);
        return true;
      },
    );
  } finally {
    done();
  }
});

test('loadRequirements refuses repeated ids, and a file that is not JSON or does not exist', () => {
  const entry = {
    id: 'COL-RTP-DUPLICATE-409',
    section: '§4.2 #2',
    text: 'x',
    products: ['collection'],
    operations: ['requestToPay'],
    verification: 'scenario',
    checks: ['status-code'],
  };
  const repeated = catalogueFile(JSON.stringify({ spec: 'momo-api-spec.md', requirements: [entry, entry] }));
  const notJson = catalogueFile('{ "spec": ');
  try {
    assert.throws(() => loadRequirements(repeated.file), /the id COL-RTP-DUPLICATE-409 is used more than once/);
    assert.throws(
      () => loadRequirements(notJson.file),
      (error: Error) => error.message.includes(notJson.file) && /is not JSON/.test(error.message),
    );
    assert.throws(
      () => loadRequirements(join(tmpdir(), 'no-such-catalogue.json')),
      /no-such-catalogue\.json is wrong:\n {2}- cannot be read/,
    );
  } finally {
    repeated.done();
    notJson.done();
  }
});

/**
 * requirements/momo-api-spec.md is a copy of the shared spec (../shared/spec/momo-api-spec.md), kept so a clone
 * alone certifies against the text its requirements cite. Its SHA-256 is committed beside it: a clone checks the
 * copy against that hash, and a checkout that has the shared original checks the original against it too, so a
 * change of the spec upstream fails here until the copy, the hash and the catalogue are brought up to date.
 */
test('the spec copy beside the catalogue is the one whose hash is committed, and the shared original has that hash too', () => {
  assert.ok(existsSync(SPEC_FILE), `${SPEC_FILE} is missing: the certification bundles it`);
  const [committed] = readFileSync(`${SPEC_FILE}.sha256`, 'utf8').trim().split(/\s+/);
  const hash = (file: string | URL) => createHash('sha256').update(readFileSync(file)).digest('hex');
  assert.equal(
    hash(SPEC_FILE),
    committed,
    'requirements/momo-api-spec.md is not the copy its committed hash (requirements/momo-api-spec.md.sha256) names',
  );
  const shared = new URL('../../../shared/spec/momo-api-spec.md', import.meta.url);
  if (existsSync(shared)) {
    assert.equal(
      hash(shared),
      committed,
      'the shared spec (../shared/spec/momo-api-spec.md) changed: copy it to requirements/, write its SHA-256 to requirements/momo-api-spec.md.sha256, and check the requirement and operation catalogues against the change',
    );
  }
});

test('the check keeps strict readings and operations beyond the spec to their own tagged scenarios', () => {
  const requirements = [
    requirement('COL-RTP-ACCEPTED-202'),
    requirement('AMOUNT-RULE', { reading: 'amountValue' }),
    requirement('BEY-TRANSFER', {
      scope: 'beyond-spec',
      source: "the provider's definition",
      section: 'beyond the spec: docs/beyond-spec.md §1',
    }),
  ];
  const scenarios = [
    { location: 'features/a.feature:3', name: 'A zero amount', tags: ['@req:AMOUNT-RULE', '@req:COL-RTP-ACCEPTED-202'] },
    { location: 'features/a.feature:9', name: 'A strict thing', tags: ['@strict', '@req:COL-RTP-ACCEPTED-202'] },
    { location: 'features/a.feature:15', name: 'A transfer', tags: ['@beyond-spec', '@req:BEY-TRANSFER'] },
    { location: 'features/a.feature:21', name: 'A transfer untagged', tags: ['@req:BEY-TRANSFER'] },
  ];
  assert.deepEqual(coverageProblems(requirements, scenarios), [
    'AMOUNT-RULE is a strict reading, yet "A zero amount" (features/a.feature:3) names it without @strict: tag the scenario @strict',
    '"A strict thing" (features/a.feature:9) is tagged @strict but names no requirement a strict reading: name one, or remove the tag',
    'BEY-TRANSFER is beyond the spec, yet "A transfer untagged" (features/a.feature:21) names it without @beyond-spec: tag the scenario @beyond-spec',
  ]);
});

test('a catalogue entry beyond the spec needs its source and a section of docs/beyond-spec.md; a reading must be a known one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'momo-catalogue-'));
  const file = join(dir, 'catalogue.json');
  writeFileSync(
    file,
    JSON.stringify({
      spec: 'momo-api-spec.md',
      requirements: [
        requirement('BEY-NO-SOURCE', { scope: 'beyond-spec', section: 'beyond the spec: docs/beyond-spec.md §1' }),
        requirement('BEY-SPEC-SECTION', { scope: 'beyond-spec', source: "the provider's definition" }),
        requirement('COL-SOURCED', { source: 'somewhere' }),
        { ...requirement('COL-READING'), reading: 'noSuchReading' },
      ],
    }),
  );
  assert.throws(
    () => loadRequirements(file),
    (error: Error) => {
      for (const pointer of ['/requirements/0', '/requirements/1/section', '/requirements/2', '/requirements/3/reading'])
        assert.ok(error.message.includes(pointer), `${pointer} in:\n${error.message}`);
      return true;
    },
  );
});
