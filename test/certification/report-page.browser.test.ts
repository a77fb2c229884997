import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { chromiumOnPath, refuseNetwork } from '../support/browser.ts';
import type { CertificationReport } from '../../conformance/certification/report.ts';
import { smokeRun } from './fixtures.ts';

const SCREENSHOTS = new URL('../../reports/', import.meta.url).pathname;

let dir: string;
let report: CertificationReport;

// One real run of the smoke scenarios against the embedded sandbox; every test reads what it wrote.
before(async () => {
  ({ dir, report } = await smokeRun());
});

test("index.html opens in headless Chromium, fetching nothing, and shows the summary and a requirement's evidence", async (t) => {
  const executablePath = chromiumOnPath();
  if (!executablePath) {
    if (process.env.CI) assert.fail('Chromium is not installed: scripts/ensure-chromium.sh installs it (CI runs it before the tests).');
    t.skip('Chromium is not installed: run scripts/ensure-chromium.sh');
    return;
  }
  // A requirement that passed with a scenario that talked to the target: its evidence must be readable. A
  // scenario's exchanges are shown under the first requirement that lists it (the others link there).
  const scenarioOf = new Map(report.scenarios.map((s) => [s.id, s]));
  const firstListedBy = new Map<string, string>();
  for (const r of report.requirements) for (const id of r.scenarios) if (!firstListedBy.has(id)) firstListedBy.set(id, r.id);
  const showsItsOwn = (r: (typeof report.requirements)[number], id: string) =>
    firstListedBy.get(id) === r.id && (scenarioOf.get(id)?.exchanges.length ?? 0) > 0;
  const shown = report.requirements.find((r) => r.verdict === 'PASS' && r.scenarios.some((id) => showsItsOwn(r, id)));
  assert.ok(shown, 'a requirement passed with evidence');

  const browser = await chromium.launch({ executablePath, headless: true });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const fetched = await refuseNetwork(page);
    await page.goto(pathToFileURL(join(dir, 'index.html')).href);

    const summary = page.locator('#summary');
    await summary.waitFor({ state: 'visible' });
    assert.match(await summary.innerText(), /The target conforms \(exit code 0\)\./);
    assert.match(
      await summary.innerText(),
      new RegExp(`${report.coverage.total.covered} / ${report.coverage.total.requirements}\\s+requirements covered`),
    );
    assert.match(await summary.innerText(), new RegExp(`${report.coverage.operationsCovered} / 19\\s+operations covered`));
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'certification-summary.png') });

    // From the table to the requirement, then open its first scenario that has exchanges.
    await page.locator(`#requirements a[href="#req-${shown.id.toLowerCase()}"]`).click();
    const article = page.locator(`article#req-${shown.id.toLowerCase()}`);
    await article.waitFor({ state: 'visible' });
    assert.match(await article.locator('h3').innerText(), new RegExp(`PASS\\s+${shown.id}`));
    const withExchanges = shown.scenarios.findIndex((id) => showsItsOwn(shown, id));
    const scenario = article.locator('details.scenario').nth(withExchanges);
    const request = scenario.locator('pre.request').first();
    assert.equal(await request.isVisible(), false, 'the evidence is folded until asked for');
    await scenario.locator('summary').click();
    await request.waitFor({ state: 'visible' });
    const exchange = scenarioOf.get(shown.scenarios[withExchanges] ?? '')?.exchanges[0];
    assert.ok(exchange);
    assert.ok((await request.innerText()).startsWith(`${exchange.request.method} ${exchange.request.url}`));
    if (exchange.response)
      assert.match(await scenario.locator('pre.response').first().innerText(), new RegExp(`^HTTP ${exchange.response.status}`));
    await request.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENSHOTS, 'certification-evidence.png') });
    assert.deepEqual(fetched, [], 'the report is self-contained');
  } finally {
    await browser.close();
  }
});
