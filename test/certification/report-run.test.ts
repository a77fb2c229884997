import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { MANIFEST_FILE, readBundle, type Manifest } from '../../conformance/certification/bundle.ts';
import type { CertificationReport } from '../../conformance/certification/report.ts';
import { runVerify } from '../../conformance/certification/verify.ts';
import { describeErrors, validatorFor } from '../../core/schemas.ts';
import { runSuite, type SuiteRun } from '../support/suite.ts';

const SCREENSHOTS = new URL('../../reports/', import.meta.url).pathname;

let run: SuiteRun;
let dir: string;
let report: CertificationReport;

// One real run of the smoke scenarios against the embedded sandbox; every test reads what it wrote.
before(async () => {
  run = await runSuite(['--tags', '@smoke', '--parallel', '0']);
  dir = join(run.reportsDir, 'certification');
  report = JSON.parse(readFileSync(join(dir, 'certification.json'), 'utf8')) as CertificationReport;
});

test('npm start ends with requirements covered and passed out of the total, operations out of 19, and the report\'s path', () => {
  assert.equal(run.code, 0, run.output);
  const { total } = report.coverage;
  assert.match(run.output, new RegExp(`\\nRequirements: ${total.covered} of ${total.requirements} covered, ${total.verdicts.PASS} of ${total.requirements} passed.*; ${total.unprovokable} more no client can provoke\\.\\n`));
  assert.match(run.output, new RegExp(`\\nOperations: ${report.coverage.operationsCovered} of 19 covered\\.\\n`));
  assert.ok(run.output.includes(`\nCertification report: ${join(dir, 'index.html')}\n`), run.output);
  assert.ok(total.covered > 0 && report.coverage.operationsCovered > 0, 'the smoke scenarios cover something');
});

test('certification.json of a real run follows its schema and counts the smoke selection as NOT APPLICABLE elsewhere', () => {
  const validate = validatorFor('certification-report');
  assert.ok(validate(report), describeErrors(validate.errors).join('\n'));
  assert.equal(report.exitCode, 0);
  assert.deepEqual(report.selection, { requested: '@smoke', expression: '(@smoke)' });
  const notApplicable = report.requirements.find((r) => r.verdict === 'NOT APPLICABLE' && r.scenarios.length > 0);
  assert.ok(notApplicable, 'some requirement has only scenarios outside @smoke');
  assert.match(notApplicable.explanation, /outside --tags "@smoke"/);
});

test('the bundle of a real run holds every artifact and the spec, and verifies as intact', async () => {
  const [bundleName] = readdirSync(dir).filter((name) => /^certification-.*\.tar\.gz$/.test(name));
  assert.ok(bundleName, `no bundle in ${dir}`);
  const bundle = join(dir, bundleName);
  const files = await readBundle(bundle);
  for (const path of [MANIFEST_FILE, 'conformance/summary.json', 'conformance/messages.ndjson', 'conformance/cucumber.html', 'conformance/junit.xml', 'certification/index.html', 'certification/certification.json', 'spec/momo-api-spec.md']) {
    assert.ok(files.has(path), `${path} is not in the bundle`);
  }
  const manifest = JSON.parse(files.get(MANIFEST_FILE)!.toString()) as Manifest;
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  assert.equal(manifest.harness.version, pkg.version);
  assert.equal(manifest.spec?.sha256, report.spec?.sha256);
  assert.equal(manifest.profile.name, 'spec');
  assert.deepEqual(manifest.configuration.subscriptionKeys, { collection: null, disbursement: null, remittance: null });
  const lines: string[] = [];
  assert.equal(await runVerify([bundle], process.cwd(), (line) => lines.push(line)), 0, lines.join('\n'));
});

test('index.html opens in headless Chromium, fetching nothing, and shows the summary and a requirement\'s evidence', async (t) => {
  const executablePath = chromiumOnPath();
  if (!executablePath) {
    if (process.env.CI) assert.fail('Chromium is not installed: scripts/ensure-chromium.sh installs it (CI runs it before the tests).');
    t.skip('Chromium is not installed: run scripts/ensure-chromium.sh');
    return;
  }
  // A requirement that passed with a scenario that talked to the target: its evidence must be readable.
  const scenarioOf = new Map(report.scenarios.map((s) => [s.id, s]));
  const shown = report.requirements.find((r) => r.verdict === 'PASS' && r.scenarios.some((id) => (scenarioOf.get(id)?.exchanges.length ?? 0) > 0));
  assert.ok(shown, 'a requirement passed with evidence');

  const browser = await chromium.launch({ executablePath, headless: true });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const fetched: string[] = [];
    await page.route('**/*', (route) => {
      if (!route.request().url().startsWith('file:')) fetched.push(route.request().url());
      return route.request().url().startsWith('file:') ? route.continue() : route.abort();
    });
    await page.goto(pathToFileURL(join(dir, 'index.html')).href);

    const summary = page.locator('#summary');
    await summary.waitFor({ state: 'visible' });
    assert.match(await summary.innerText(), /The target conforms \(exit code 0\)\./);
    assert.match(await summary.innerText(), new RegExp(`${report.coverage.total.covered} / ${report.coverage.total.requirements}\\s+requirements covered`));
    assert.match(await summary.innerText(), new RegExp(`${report.coverage.operationsCovered} / 19\\s+operations covered`));
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'certification-summary.png') });

    // From the table to the requirement, then open its first scenario that has exchanges.
    await page.locator(`#requirements a[href="#req-${shown.id.toLowerCase()}"]`).click();
    const article = page.locator(`article#req-${shown.id.toLowerCase()}`);
    await article.waitFor({ state: 'visible' });
    assert.match(await article.locator('h3').innerText(), new RegExp(`PASS\\s+${shown.id}`));
    const withExchanges = shown.scenarios.findIndex((id) => (scenarioOf.get(id)?.exchanges.length ?? 0) > 0);
    const scenario = article.locator('details.scenario').nth(withExchanges);
    const request = scenario.locator('pre.request').first();
    assert.equal(await request.isVisible(), false, 'the evidence is folded until asked for');
    await scenario.locator('summary').click();
    await request.waitFor({ state: 'visible' });
    const exchange = scenarioOf.get(shown.scenarios[withExchanges] ?? '')?.exchanges[0];
    assert.ok(exchange);
    assert.ok((await request.innerText()).startsWith(`${exchange.request.method} ${exchange.request.url}`));
    if (exchange.response) assert.match(await scenario.locator('pre.response').first().innerText(), new RegExp(`^HTTP ${exchange.response.status}`));
    await request.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENSHOTS, 'certification-evidence.png') });
    assert.deepEqual(fetched, [], 'the report is self-contained');
  } finally {
    await browser.close();
  }
});

function chromiumOnPath(): string | undefined {
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    for (const name of ['chromium', 'chromium-browser']) if (existsSync(join(folder, name))) return join(folder, name);
  }
  return undefined;
}
