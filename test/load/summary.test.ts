/** The load run's own logic, without k6: the one-line message without k6 or Go, and thresholds as JUnit. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ensureWithoutGo } from '../support/go-tools.ts';
import { junitReport, thresholdResults, withoutSetupData, type K6Summary } from '../../load/runner/summary.ts';

test('without k6 and without Go, the load commands stop with one line that says how to install k6', () => {
  const result = ensureWithoutGo('ensure-k6.sh');
  assert.equal(result.status, 3);
  assert.equal(result.stdout, '');
  assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
  assert.match(result.stderr, /install k6 \(https:\/\/grafana\.com\/docs\/k6\/latest\/set-up\/install-k6\/\) or Go/);
});

test('thresholds become JUnit test cases, a crossed one a failure, and setup data is dropped', () => {
  const summary: K6Summary = {
    metrics: {
      'http_req_duration{op:createAccessToken}': { 'p(95)': 812.5, thresholds: { 'p(95)<250': true, 'p(99)<750': false } },
      momo_lost_transactions: { count: 0, thresholds: { 'count<=0': false } },
    },
    root_group: { checks: { a: { name: 'token: status 200', passes: 9, fails: 1 } } },
    setup_data: { collection: { apiKey: 'secret' } },
  };
  const results = thresholdResults(summary);
  assert.deepEqual(
    results.map((r) => [r.metric, r.expression, r.passed]),
    [
      ['http_req_duration{op:createAccessToken}', 'p(95)<250', false],
      ['http_req_duration{op:createAccessToken}', 'p(99)<750', true],
      ['momo_lost_transactions', 'count<=0', true],
    ],
  );
  const junit = junitReport('token-storm', summary, 12.3);
  assert.match(junit, /tests="4" failures="2"/);
  assert.match(
    junit,
    /<failure message="threshold crossed: http_req_duration\{op:createAccessToken\} p\(95\)&lt;250">p\(95\)=812\.5<\/failure>/,
  );
  assert.match(junit, /<failure message="1 of 10 failed"><\/failure>/);
  assert.equal('setup_data' in withoutSetupData(summary), false);
});
