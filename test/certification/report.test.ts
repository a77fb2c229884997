import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Envelope } from '@cucumber/messages';
import type { Exchange } from '../../harness/client/momo-client.ts';
import { EvidenceCollector } from '../../conformance/certification/evidence.ts';
import { renderHtml } from '../../conformance/certification/html.ts';
import { buildReport, closingLines, type ReportInputs } from '../../conformance/certification/report.ts';
import { urlOf } from '../../core/catalogue/routes.ts';
import { describeErrors, validatorFor } from '../../core/validation/schemas.ts';
import { requirement, scenario } from './fixtures.ts';

/** The embedded sandbox serves both hosts, {base_url} and {sandbox_url}. */
const TARGET = 'http://127.0.0.1:8080';
const RTP_URL = urlOf('requestToPay', 'collection', { gateway: TARGET, provisioning: TARGET });
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const EXCHANGE: Exchange = {
  operation: 'request to pay (collection)',
  request: {
    method: 'POST',
    url: RTP_URL,
    headers: { Authorization: 'Bearer [REDACTED]', 'X-Reference-Id': '0b6f1c9e-3f3a-4c41-9d0e-1f2a3b4c5d6e' },
    body: '{"amount":"12.50","payerMessage":"<script>alert(1)</script>"}',
  },
  response: { status: 202, headers: { 'content-length': '0' }, body: '', durationMs: 4 },
};

function inputs(more: Partial<ReportInputs> = {}): ReportInputs {
  const scenarios = [
    { ...scenario('pays', 'passed', ['COL-RTP']), exchanges: [EXCHANGE] },
    { ...scenario('refunds', 'not run', ['DIS-REFUND'], { tags: ['@disbursement', '@req:DIS-REFUND'] }), exchanges: [] },
  ];
  return {
    harness: { name: 'momo-conformance-harness', version: '0.1.0' },
    generatedAt: new Date('2026-03-10T12:00:00Z'),
    spec: { file: 'momo-api-spec.md', sha256: 'a'.repeat(64) },
    summary: {
      target: 'the embedded reference sandbox',
      exitCode: 0,
      scenarios: [{ ...scenario('pays', 'passed', ['COL-RTP']), verdict: 'passed', scenario: 'pays', line: 10, durationMs: 3 }],
    },
    requirements: [
      requirement('COL-RTP'),
      requirement('DIS-REFUND', { products: ['disbursement'], operations: ['refund'], section: '§4.3 #9' }),
      requirement('ERR-RATE', { verification: 'unprovokable', why: 'thresholds are not shown (§8)', operations: [] }),
    ],
    scenarios,
    waivers: [],
    run: { profile: 'mtn-sandbox', requested: '@collection', expression: '(@collection)' },
    ...more,
  };
}

test('certification.json follows its schema, with verdicts, coverage out of 19 and the evidence of each scenario', () => {
  const report = buildReport(inputs());
  const validate = validatorFor('certification-report');
  assert.ok(validate(report), describeErrors(validate.errors).join('\n'));
  assert.deepEqual(
    report.requirements.map((r) => [r.id, r.verdict]),
    [
      ['COL-RTP', 'PASS'],
      ['DIS-REFUND', 'NOT APPLICABLE'],
      ['ERR-RATE', 'UNPROVOKABLE'],
    ],
  );
  assert.deepEqual(report.requirements[0]?.specOperations, ['4.2 #2']);
  assert.equal(report.coverage.operations.length, 19);
  assert.equal(report.coverage.operationsCovered, 1);
  assert.equal(report.outcome, 'conforms');
  assert.deepEqual(report.selection, { requested: '@collection', expression: '(@collection)' });
  assert.deepEqual(report.scenarios[0]?.exchanges, [EXCHANGE]);
  assert.deepEqual(report.scenarios[0]?.requirements, ['COL-RTP']);
  assert.ok(report.profile.deviations.some((d) => d.name === 'tokenFailureStatus' && d.spec === 401 && d.profile === 500));
});

test('a report that does not follow the schema is caught by it', () => {
  const report = buildReport(inputs()) as unknown as Record<string, unknown>;
  const validate = validatorFor('certification-report');
  assert.equal(validate({ ...report, exitCode: 3 }), false);
  assert.equal(validate({ ...report, requirements: [{ id: 'X' }] }), false);
});

test("the closing lines give requirements covered and passed out of the total, operations out of 19, and the report's path", () => {
  const lines = closingLines(buildReport(inputs()), '/reports/certification/index.html');
  assert.deepEqual(lines, [
    'Requirements: 1 of 2 covered, 1 of 2 passed (1 NOT APPLICABLE); 1 more no client can provoke.',
    'Operations: 1 of 19 covered.',
    'Certification report: /reports/certification/index.html',
  ]);
});

test("index.html shows the summary, the coverage, each requirement's verdict and evidence, escaped, and fetches nothing", () => {
  const html = renderHtml(buildReport(inputs()));
  assert.match(html, /<section id="summary">[\s\S]*<span class="number">1 \/ 2<\/span> requirements covered/);
  assert.match(html, /<h3>By operation: 1 of 19 covered<\/h3>/);
  assert.match(html, /<a href="#req-col-rtp">COL-RTP<\/a>/);
  assert.match(html, new RegExp(`<article class="requirement" id="req-col-rtp">[\\s\\S]*POST ${escapeRegExp(RTP_URL)}[\\s\\S]*HTTP 202`));
  assert.match(html, /Authorization: Bearer \[REDACTED\]/);
  assert.match(html, /No client can provoke it: thresholds are not shown \(§8\)/);
  assert.ok(!html.includes('<script>alert(1)</script>'), 'bodies are escaped');
  assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.doesNotMatch(html, /<(script|link|img|iframe)\b|src=|https?:\/\/(?!127\.0\.0\.1)/, 'nothing is loaded from elsewhere');
});

test('index.html leads with a cause several failures share, and shows the calls made again by operation', () => {
  const reason = '  ✘ status-code (§4.2 #2): status: expected 202, got 401\n  received: HTTP 401 {"error":"invalid_token"}';
  const failing = (name: string, id: string) => ({ ...scenario(name, 'failed', [id], { reason }), exchanges: [] });
  const scenarios = [failing('pays', 'COL-RTP'), failing('refunds', 'DIS-REFUND')];
  const html = renderHtml(
    buildReport(
      inputs({
        scenarios,
        summary: {
          target: 'x',
          exitCode: 1,
          scenarios: scenarios.map((s) => ({ ...s, verdict: 'failed' as const, scenario: s.name, line: 10, durationMs: 3 })),
          availability: [
            {
              operation: 'get balance (collection)',
              calls: 9,
              retried: 1,
              outcomes: { answered: 1 },
              met: { '503 SERVICE_UNAVAILABLE': 1 },
            },
          ],
        },
      }),
    ),
  );
  assert.match(
    html,
    /<section id="causes">[\s\S]*<code>status-code \(status\): HTTP 401 invalid_token<\/code><\/td><td class="n">2<\/td><td><a href="#req-col-rtp">COL-RTP<\/a>, <a href="#req-dis-refund">DIS-REFUND<\/a>/,
  );
  assert.ok(html.indexOf('id="causes"') < html.indexOf('id="failures"'), 'the cause comes first');
  assert.match(
    html,
    /<section id="availability">[\s\S]*get balance \(collection\)<\/td><td class="n">9<\/td><td class="n">1<\/td><td>503 SERVICE_UNAVAILABLE ×1<\/td><td>answered ×1/,
  );
  assert.doesNotMatch(renderHtml(buildReport(inputs())), /id="causes"|id="availability"/);
});

test("index.html shows a scenario's exchanges once, under the first requirement it verifies, and links there from the others", () => {
  const both = { ...scenario('pays twice', 'passed', ['COL-RTP', 'COL-RTP-2']), exchanges: [EXCHANGE] };
  const html = renderHtml(
    buildReport(
      inputs({
        requirements: [requirement('COL-RTP'), requirement('COL-RTP-2')],
        scenarios: [both],
        summary: {
          target: 'the embedded reference sandbox',
          exitCode: 0,
          scenarios: [{ ...both, verdict: 'passed', scenario: 'pays twice', line: 10, durationMs: 3 }],
        },
      }),
    ),
  );
  assert.equal(html.split(`POST ${RTP_URL}`).length - 1, 1, 'the exchange is shown once');
  assert.match(
    html,
    /<article class="requirement" id="req-col-rtp-2">[\s\S]*Its exchanges are shown under <a href="#req-col-rtp">COL-RTP<\/a>\./,
  );
});

test('evidence the budget left out, or a body cut, is named in the report: each omitted exchange, a note in the summary, a closing line', () => {
  const omitted: Exchange = {
    operation: 'request to pay (collection)',
    request: { method: 'POST', url: RTP_URL, headers: {} },
    omitted:
      "HTTP 202 in 4 ms; not recorded: the run's evidence budget (MOMO_EVIDENCE_BUDGET_BYTES, 32 MiB) was spent, so only the call and its outcome are kept",
  };
  const cut: Exchange = {
    ...EXCHANGE,
    response: {
      status: 200,
      headers: {},
      body: 'x\n… [the body exceeded 1 MiB (MOMO_MAX_RESPONSE_BYTES): the harness read that much of it and no further]',
      durationMs: 4,
      bodyCut: { keptCharacters: 32768, characters: 1048576, bytes: 1048576, exceededLimit: 1048576 },
    },
  };
  const pays = { ...scenario('pays', 'passed', ['COL-RTP']), exchanges: [EXCHANGE, cut, omitted] };
  const report = buildReport(inputs({ scenarios: [pays] }));
  const validate = validatorFor('certification-report');
  assert.ok(validate(report), describeErrors(validate.errors).join('\n'));
  const html = renderHtml(report);
  assert.match(
    html,
    /<div class="evidence-note"><p>1 of 3 exchanges are not recorded: the run&#39;s evidence budget \(MOMO_EVIDENCE_BUDGET_BYTES\) was spent, so each shows only its call and its outcome\.<\/p><p>1 exchange has a body cut in the evidence, each saying where and how long it was; 1 of them exceeded what the harness reads \(MOMO_MAX_RESPONSE_BYTES\)\.<\/p><\/div>/,
  );
  assert.match(html, /<p class="omitted-note">HTTP 202 in 4 ms; not recorded: the run&#39;s evidence budget/);
  assert.match(html, /the body exceeded 1 MiB \(MOMO_MAX_RESPONSE_BYTES\): the harness read that much of it and no further/);
  assert.ok(
    closingLines(report, 'index.html').includes(
      "Evidence: 1 of 3 exchanges not recorded, the run's evidence budget (MOMO_EVIDENCE_BUDGET_BYTES) was spent; each keeps only its call and outcome.",
    ),
  );
});

test('target text in the evidence cannot end a block of index.html or leave it unsafe: a pretty-printed body keeps its escapes', () => {
  const hostile: Exchange = {
    ...EXCHANGE,
    response: {
      status: 200,
      headers: { 'x-echo': '</script><!--]]\\u003e' },
      body: JSON.stringify({ m: '</pre></script><!-- ]]>' }).replace(']]>', ']]\\u003e'),
      durationMs: 4,
    },
  };
  const html = renderHtml(buildReport(inputs({ scenarios: [{ ...scenario('pays', 'passed', ['COL-RTP']), exchanges: [hostile] }] })));
  assert.doesNotMatch(html, /<\/script|<!--|<\/pre><\/script|]]>/);
  assert.match(html, /&lt;\/pre&gt;&lt;\/script&gt;&lt;!-- ]]\\u003e/);
});

test("the evidence collector lists every scenario of the suite, run or not, with the last attempt's exchanges", () => {
  const collector = new EvidenceCollector();
  const pickle = (id: string, name: string, tags: string[]): Envelope =>
    ({
      pickle: {
        id,
        uri: 'features/collection.feature',
        name,
        language: 'en',
        steps: [],
        tags: tags.map((t) => ({ name: t, astNodeId: 't' })),
        astNodeIds: [],
      },
    }) as Envelope;
  const attach = (testCaseStartedId: string, exchanges: Exchange[]): Envelope =>
    ({
      attachment: {
        testCaseStartedId,
        body: JSON.stringify({ passed: true, exchanges }),
        mediaType: 'application/json',
        fileName: 'evidence.json',
        contentEncoding: 'IDENTITY',
      },
    }) as Envelope;
  const envelopes: Envelope[] = [
    {
      gherkinDocument: { uri: 'features/collection.feature', comments: [], feature: { name: 'Collection', children: [] } },
    } as unknown as Envelope,
    pickle('p1', 'pays', ['@req:COL-RTP']),
    pickle('p2', 'refunds', ['@req:DIS-REFUND']),
    { testCase: { id: 'tc1', pickleId: 'p1', testSteps: [] } } as Envelope,
    { testCaseStarted: { id: 'first', testCaseId: 'tc1', attempt: 0, timestamp: { seconds: 0, nanos: 0 } } } as Envelope,
    attach('first', [{ ...EXCHANGE, operation: 'first attempt' }]),
    { testCaseStarted: { id: 'retry', testCaseId: 'tc1', attempt: 1, timestamp: { seconds: 0, nanos: 0 } } } as Envelope,
    attach('retry', [EXCHANGE]),
  ];
  for (const envelope of envelopes) collector.record(envelope);
  const scenarios = collector.scenarios([
    {
      id: 'p1',
      feature: 'Collection',
      scenario: 'pays',
      uri: 'features/collection.feature',
      line: 7,
      tags: ['@req:COL-RTP'],
      verdict: 'passed',
      durationMs: 1,
    },
  ]);
  assert.deepEqual(
    scenarios.map((s) => [s.id, s.feature, s.name, s.verdict, s.line, s.exchanges.map((e) => e.operation)]),
    [
      ['p1', 'Collection', 'pays', 'passed', 7, ['request to pay (collection)']],
      ['p2', 'Collection', 'refunds', 'not run', undefined, []],
    ],
  );
});
