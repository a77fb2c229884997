import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { HAR_FOLDER, writeHarFiles } from '../../conformance/certification/har-files.ts';
import type { ScenarioEvidence } from '../../conformance/certification/evidence.ts';
import { validatorFor } from '../../core/validation/schemas.ts';
import type { Har } from '../../harness/reproduction/har.ts';

const EXCHANGE = {
  operation: 'get balance (collection)',
  request: {
    method: 'GET',
    url: 'http://127.0.0.1:1/collection/v1_0/account/balance',
    headers: { 'Ocp-Apim-Subscription-Key': '[REDACTED]' },
  },
  response: { status: 200, headers: {}, body: '{}', durationMs: 1 },
};

function scenario(name: string, exchanges: ScenarioEvidence['exchanges']): ScenarioEvidence {
  return {
    id: name,
    feature: 'Collecting payments',
    name,
    uri: 'features/collection.feature',
    line: 12,
    tags: [],
    verdict: 'passed',
    exchanges,
  };
}

test("one HAR file per scenario that called the target, named after its feature, line and name, each run's files only", () => {
  const reports = mkdtempSync(join(tmpdir(), 'momo-har-'));
  mkdirSync(join(reports, HAR_FOLDER));
  writeFileSync(join(reports, HAR_FOLDER, 'an-earlier-run.har'), '{}');
  const files = writeHarFiles(
    reports,
    [
      scenario('A merchant reads its balance', [EXCHANGE]),
      scenario('A merchant reads its balance', [EXCHANGE]),
      scenario('Nothing was called', []),
    ],
    { name: 'momo-conformance-harness', version: '0.0.0' },
    new Date('2026-03-10T12:00:00Z'),
  );
  assert.deepEqual(
    files.map((f) => basename(f)),
    ['collection-12-a-merchant-reads-its-balance.har', 'collection-12-a-merchant-reads-its-balance-2.har'],
  );
  assert.deepEqual(readdirSync(join(reports, HAR_FOLDER)).sort(), files.map((f) => basename(f)).sort());
  const har = JSON.parse(readFileSync(files[0]!, 'utf8')) as Har;
  assert.ok(validatorFor('har')(har));
  assert.equal(har.log.pages[0]!.title, 'Collecting payments › A merchant reads its balance');
  assert.equal(har.log.entries[0]!.startedDateTime, '2026-03-10T12:00:00.000Z', "the run's time where the evidence has none");
});
