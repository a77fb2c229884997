import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { chromiumOnPath, refuseNetwork } from '../support/browser.ts';
import { appendHistory, readHistory } from '../../conformance/trend/history.ts';
import { renderTrend } from '../../conformance/trend/page.ts';
import { record } from './fixtures.ts';

const SCREENSHOTS = new URL('../../reports/', import.meta.url).pathname;
const RTP = 'request to pay (collection)';
const HOSTILE = 'http://127.0.0.1:1/"><script>document.title="owned"</script><img src="https://example.com/x.png">';

test('the trend page opens in headless Chromium, fetching nothing and running nothing, and draws each night', async (t) => {
  const executablePath = chromiumOnPath();
  if (!executablePath) {
    if (process.env.CI) assert.fail('Chromium is not installed: scripts/ensure-chromium.sh installs it (CI runs it before the tests).');
    t.skip('Chromium is not installed: run scripts/ensure-chromium.sh');
    return;
  }
  // Four nights: COL-A passes, fails, is flaky, then is not tested (the target was down); a corrupt line between.
  const dir = mkdtempSync(join(tmpdir(), 'momo-trend-'));
  const file = join(dir, 'history.ndjson');
  appendHistory(file, record('2026-03-10T02:00:00.000Z', { 'COL-A': 'PASS', 'COL-B': 'PASS' }, { [RTP]: { count: 40, p50: 12, p95: 30 } }));
  appendHistory(file, record('2026-03-11T02:00:00.000Z', { 'COL-A': 'FAIL', 'COL-B': 'PASS' }, { [RTP]: { count: 40, p50: 15, p95: 45 } }));
  appendFileSync(file, '{"cut off\n');
  appendHistory(file, record('2026-03-12T02:00:00.000Z', { 'COL-A': 'FLAKY', 'COL-B': 'PASS' }, { [RTP]: { count: 41, p50: 11, p95: 90 } }, { target: HOSTILE }));
  appendHistory(file, record('2026-03-13T02:00:00.000Z', { 'COL-A': 'NOT TESTED', 'COL-B': 'NOT TESTED' }, {}));
  const page = join(dir, 'index.html');
  writeFileSync(page, renderTrend(readHistory(file), 'history.ndjson'));

  const browser = await chromium.launch({ executablePath, headless: true });
  try {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, javaScriptEnabled: true });
    const tab = await context.newPage();
    const fetched = await refuseNetwork(tab);
    await tab.goto(pathToFileURL(page).href);

    const row = tab.locator('#requirements tr[data-requirement="COL-A"]');
    await row.waitFor({ state: 'visible' });
    const nights = await row.locator('td.cell').evaluateAll((cells) => cells.map((c) => c.className.replace('cell ', '')));
    assert.deepEqual(nights, ['s-passed', 's-failed', 's-flaky', 's-not-tested']);
    assert.deepEqual(await row.locator('td.n').allInnerTexts(), ['1', '1', '1', '1'], 'passed, failed, flaky, not tested: one night each');
    assert.match(await tab.locator('#corrupt').innerText(), /line 3: not JSON/);

    // The chart: a p50 and a p95 line through the three nights that called the operation, the p95 higher on screen.
    const chart = tab.locator(`figure[data-operation="${RTP}"] svg`);
    assert.equal(await chart.locator('circle.p50').count(), 3);
    assert.equal(await chart.locator('circle.p95').count(), 3);
    const box = await chart.boundingBox();
    assert.ok(box && box.width > 0 && box.height > 0, 'the chart is drawn');
    const [p50y, p95y] = await Promise.all(['p50', 'p95'].map((k) => chart.locator(`circle.${k}`).nth(2).getAttribute('cy')));
    assert.ok(Number(p95y) < Number(p50y), 'the third night\'s p95 (90 ms) is above its p50 (11 ms)');
    assert.match(await chart.locator('circle.p95').nth(2).locator('title').textContent() ?? '', /p95 90 ms \(41 responses\)/);

    // The hostile target text shows as text: no script ran, no image was asked for.
    assert.match(await tab.locator('#runs').innerText(), /<script>document\.title="owned"<\/script>/);
    assert.doesNotMatch(await tab.title(), /owned/);
    assert.equal(await tab.locator('script, img').count(), 0);
    mkdirSync(SCREENSHOTS, { recursive: true });
    await tab.screenshot({ path: join(SCREENSHOTS, 'trend.png'), fullPage: true });
    assert.deepEqual(fetched, [], 'the page is self-contained');
  } finally {
    await browser.close();
  }
});
