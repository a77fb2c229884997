/**
 * The rule × operation matrix (conformance/certification/rule-matrix.ts): every cell is checked by a scenario, does not
 * apply for a reason the catalogue gives, or cannot be provoked for a reason written down; an operation the scenarios
 * forget is an unexplained cell, and this test fails on it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readScenarios } from '../../conformance/certification/coverage.ts';
import { loadRequirements } from '../../conformance/certification/requirements.ts';
import { RULE_CLASSES, operationsLeftTo, ruleMatrix, specOperationIds } from '../../conformance/certification/rule-matrix.ts';

const requirements = loadRequirements();
const scenarios = readScenarios();

test('every cell of the rule × operation matrix is checked, not applicable or not provokable, each with its why', () => {
  const matrix = ruleMatrix(requirements, scenarios);
  const unexplained = matrix.rows.flatMap(({ rule, cells }) =>
    Object.entries(cells)
      .filter(([, cell]) => cell.kind === 'unexplained')
      .map(([id, cell]) => `${rule.id} × ${id}: ${'why' in cell ? cell.why : ''}`),
  );
  assert.deepEqual(unexplained, []);
  assert.equal(matrix.operations.length, 18, 'the spec’s 19 operations, the account-holder check counted once');
  assert.equal(matrix.counts.checked + matrix.counts['not applicable'] + matrix.counts['not provokable'], RULE_CLASSES.length * 18);
  for (const { cells } of matrix.rows)
    for (const cell of Object.values(cells)) {
      if (cell.kind === 'checked') assert.ok(cell.scenarios.length > 0 && cell.requirements.length > 0);
      else assert.ok('why' in cell && cell.why.length > 0);
    }
});

test('an operation the scenarios forget is an unexplained cell, naming the rule and the operation', () => {
  const forgetful = requirements.map((r) =>
    r.id === 'AUTH-SUBSCRIPTION-KEY' ? { ...r, operations: r.operations.filter((o) => o !== 'getApiUser') } : r,
  );
  const cell = ruleMatrix(forgetful, scenarios).rows.find((r) => r.rule.id === 'subscription-key')!.cells.getApiUser!;
  assert.equal(cell.kind, 'unexplained');
  assert.match('why' in cell ? cell.why : '', /AUTH-SUBSCRIPTION-KEY names getApiUser/);
  const withoutScenarios = ruleMatrix(requirements, []).counts;
  assert.equal(withoutScenarios.checked, 0, 'a requirement no scenario names checks nothing');
});

test('which operations a rule applies to is read from the catalogue, not from the scenarios', () => {
  const applying = (id: string) => {
    const rule = RULE_CLASSES.find((r) => r.id === id)!;
    return specOperationIds().filter(
      (op) => ruleMatrix(requirements, scenarios).rows.find((r) => r.rule === rule)!.cells[op]!.kind !== 'not applicable',
    );
  };
  assert.equal(applying('subscription-key').length, 18, '§5 rule 1: every operation');
  assert.deepEqual(applying('duplicate').sort(), ['createApiUser', 'deposit', 'refund', 'requestToPay']);
  assert.deepEqual(applying('callback').sort(), ['bcAuthorize', 'deposit', 'refund', 'requestToPay']);
  assert.deepEqual(applying('not-found').sort(), [
    'createApiKey',
    'deliveryNotification',
    'getApiUser',
    'getDepositStatus',
    'getRefundStatus',
    'getRequestToPayStatus',
  ]);
  // The 500 of a foreign environment is the spec's for these; the sandbox's own for the rest (not a rule of the spec there).
  assert.ok(!applying('foreign-environment').includes('deliveryNotification'));
  assert.ok(applying('forged-token').includes('userInfo') && !applying('forged-token').includes('createAccessToken'));
});

test('the generated scenarios go where no hand-written requirement already checks the rule', () => {
  assert.deepEqual(operationsLeftTo('foreign-environment', 'ENV-NOT-ALLOWED-500', requirements).sort(), [
    'deposit',
    'refund',
    'requestToPay',
  ]);
  assert.deepEqual(operationsLeftTo('not-found', 'TXN-UNKNOWN-404', requirements).sort(), [
    'getDepositStatus',
    'getRefundStatus',
    'getRequestToPayStatus',
  ]);
});
