/**
 * Every check the harness makes names its source (core/sources.ts), and so does everything a check takes its source
 * from: the catalogue's answers, the response records' schemas, the profiles' differences. Only a definite source
 * fails a target in the spec profile; an observation only in the mtn-sandbox profile; a reading only with --strict.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CHECKS, CHECK_NAMES, describeDifference, failureLine, finding, severityOfFinding, weigh } from '../../harness/checks/index.ts';
import { codeSourceOf, statusSourceOf } from '../../harness/checks/contract.ts';
import { DIFFERENCES, PROFILES } from '../../core/profiles.ts';
import { OPERATION_IDS, OPERATIONS } from '../../core/catalogue/operations.ts';
import { bodySchemasOf, productsOf } from '../../core/catalogue/routes.ts';
import { describeSource, severityOf, type Source } from '../../core/sources.ts';
import { validatorFor } from '../../core/validation/schemas.ts';
import { moneyMovedFindings } from '../../harness/checks/accounts.ts';
import { customerIn, ownCustomerFindings } from '../../harness/checks/consent.ts';
import { statusesInWords } from '../../harness/checks/answers.ts';

/** A source that says where it comes from: a clause, a note or a reading of some words. */
function assertCited(source: Source | undefined, where: string): void {
  assert.ok(source, `${where} has no source`);
  const text = source.kind === 'spec' ? source.clause : source.kind === 'observed' ? source.note : source.reading;
  assert.ok(typeof text === 'string' && text.trim().length >= 2, `${where}: its ${source.kind} source cites nothing`);
}

test('every check has a title and a source', () => {
  assert.ok(CHECK_NAMES.length >= 20, `${CHECK_NAMES.length} checks`);
  for (const name of CHECK_NAMES) {
    const check = CHECKS[name];
    assert.match(name, /^[a-z]+(-[a-z]+)*$/, name);
    assert.ok(check.title.length > 20 && check.title.endsWith('.'), `${name}: ${check.title}`);
    assertCited(check.source, `the check ${name}`);
  }
});

test("a finding without a source of its own takes its check's; one that cites a clause keeps it", () => {
  assert.deepEqual(finding('final-state-is-final', { expected: 'a', received: 'b' }).source, CHECKS['final-state-is-final'].source);
  assert.deepEqual(finding('status-code', { expected: '409', received: '202', source: { kind: 'spec', clause: '§7 rule 1' } }).source, {
    kind: 'spec',
    clause: '§7 rule 1',
  });
  assert.equal(
    describeDifference(finding('record-echoes-request', { field: '/amount', expected: '"12.5"', received: '"13.5"' })),
    '/amount: expected "12.5", got "13.5"',
  );
});

test('only a definite source fails in the spec profile; an observation fails on mtn-sandbox; a reading only with --strict; an advisory check never', () => {
  const spec: Source = { kind: 'spec', clause: '§3' };
  const observed: Source = { kind: 'observed', note: 'real-api-notes' };
  const reading: Source = { kind: 'reading', reading: 'ours' };
  const table = PROFILES.flatMap((profile) =>
    [false, true].map((strict) => [profile, strict, ...[spec, observed, reading].map((s) => severityOf(s, { profile, strict }))]),
  );
  assert.deepEqual(table, [
    ['spec', false, 'failure', 'warning', 'warning'],
    ['spec', true, 'failure', 'warning', 'failure'],
    ['mtn-sandbox', false, 'failure', 'failure', 'warning'],
    ['mtn-sandbox', true, 'failure', 'failure', 'failure'],
  ]);
  const unknown = finding('unknown-field', { field: '/extra', expected: 'only named fields', received: 'a field' });
  for (const profile of PROFILES) assert.equal(severityOfFinding(unknown, { profile, strict: true }), 'warning');
  const { failures, warnings } = weigh(
    [
      finding('status-code', { expected: '1', received: '2', source: observed }),
      finding('status-code', { expected: '1', received: '2', source: spec }),
    ],
    { profile: 'spec', strict: false },
  );
  assert.equal(failures.length, 1);
  assert.equal(warnings.length, 1);
  assert.match(
    failureLine(finding('token-type', { field: '/token_type', expected: '"Bearer"', received: '"mac"', source: reading }), {
      profile: 'spec',
      strict: true,
    }),
    /✘ token-type \(reading: .*; a failure because the run is --strict\): \/token_type: expected "Bearer", got "mac"/,
  );
  assert.equal(describeSource(spec), 'definite: §3');
});

test('every answer of the catalogue cites where its status and codes come from', () => {
  for (const id of OPERATION_IDS) {
    for (const product of productsOf(id)) {
      for (const status of Object.keys(OPERATIONS[id].responses).map(Number)) {
        assertCited(statusSourceOf(id, product, [status]), `${id} under ${product}, ${status}`);
        assertCited(codeSourceOf(id, product, status), `${id} under ${product}, the codes of ${status}`);
      }
    }
  }
});

test('every record schema of an answer names its source, so each departure from it weighs by where it comes from', () => {
  const schemas = new Set<string>();
  for (const id of OPERATION_IDS) {
    for (const product of productsOf(id)) {
      for (const response of Object.values(OPERATIONS[id].responses)) {
        for (const schema of bodySchemasOf(response, OPERATIONS[id].products[product]!.errors)) schemas.add(schema);
      }
    }
  }
  schemas.add('oauth-error');
  schemas.add('gateway-error');
  schemas.delete('bad-request'); // 400 bodies are not checked (§7 rule 6: not shown).
  for (const name of schemas) assertCited((validatorFor(name).schema as { 'x-source'?: Source })['x-source'], `${name}.schema.json`);
});

test('every difference of the profiles cites a source for each side', () => {
  for (const [name, difference] of Object.entries(DIFFERENCES)) {
    for (const profile of PROFILES) assertCited(difference.sources[profile], `${name} (${profile})`);
    // The mtn-sandbox side is the live service's, as the notes record it, or a reading where they leave it to inference.
    assert.notEqual(difference.sources['mtn-sandbox'].kind, 'spec', `${name}: the mtn-sandbox side is the live service's`);
  }
});

test('a balance summed in floating point is money moved wrongly, named with the exact sum; one moved right is nothing', () => {
  const [wrong] = moneyMovedFindings('3.3000000000000003', '1.1', '2.2', true);
  assert.equal(wrong?.check, 'money-moves-once');
  assert.equal(wrong?.expected, '"3.3"');
  assert.deepEqual(moneyMovedFindings('3.30', '1.1', '2.2'), []);
  assert.deepEqual(moneyMovedFindings('999996.7', '999998.9', '-2.2'), []);
  assert.equal(moneyMovedFindings('1.1', '1.1', '2.2')[0]?.check, 'balance-follows-payments', 'not moved: a target without balances');
  assert.equal(moneyMovedFindings('1,000', '1.1', '2.2')[0]?.expected, 'a decimal amount');
});

test('a status list reads short: each once, in order, runs of three or more as ranges', () => {
  const anyRefusal = Array.from({ length: 200 }, (_, i) => 400 + i).filter((s) => s < 502 || s > 504);
  assert.equal(statusesInWords(anyRefusal), '400–501 or 505–599');
  assert.equal(statusesInWords([500, 400, 400]), '400 or 500');
  assert.equal(statusesInWords([500, 401, 402, 403]), '401–403 or 500');
});

test("a refreshed consent token reading the other customer fails (definite); another sub is a reading's warning", () => {
  const first = customerIn({ sub: '46733123499', name: 'Sand Box', updated_at: 1 })!;
  const other = customerIn({ sub: 46733123498 })!;
  assert.deepEqual(ownCustomerFindings(first, other, customerIn({ sub: '46733123499', name: 'Other', iat: 2 })), []);
  const [mixedUp] = ownCustomerFindings(first, other, customerIn({ sub: 46733123498, name: 'Sand Box' }));
  assert.equal(mixedUp?.check, 'consent-refresh-own-customer');
  assert.equal(mixedUp?.source.kind, 'spec');
  const [changed] = ownCustomerFindings(first, other, customerIn({ sub: 'pairwise-7' }));
  assert.equal(changed?.check, 'consent-refresh-same-sub');
  assert.equal(changed?.source.kind, 'reading');
  assert.equal(customerIn({ name: 'Ann' }), undefined, 'without sub, no customer is told');
  assert.equal(ownCustomerFindings(first, other, customerIn('not a record'))[0]?.received, 'no sub');
});
