import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { chromiumOrSkip, refuseNetwork } from '../support/browser.ts';
import { appendHistory, readHistory } from '../../conformance/trend/history.ts';
import { renderTrend } from '../../conformance/trend/page.ts';
import { record } from './fixtures.ts';

const SCREENSHOTS = new URL('../../reports/', import.meta.url).pathname;
const RTP = 'request to pay (collection)';
const PAYMENT = 'features/collection.feature › A customer pays a partner';
const HOSTILE = 'http://127.0.0.1:1/"><script>document.title="owned"</script><img src="https://example.com/x.png">';

test('the trend page opens in headless Chromium, fetching nothing and running nothing, and draws each night', async (t) => {
  const executablePath = chromiumOrSkip(t);
  if (!executablePath) return;
  // Four runs: COL-A passes, fails, is flaky, then is not tested (the target was down) the same day; a corrupt line between.
  const dir = mkdtempSync(join(tmpdir(), 'momo-trend-'));
  const file = join(dir, 'history.ndjson');
  appendHistory(file, record('2026-03-10T02:00:00.000Z', { 'COL-A': 'PASS', 'COL-B': 'PASS' }, { [RTP]: { count: 40, p50: 12, p95: 30 } }));
  appendHistory(file, record('2026-03-11T02:00:00.000Z', { 'COL-A': 'FAIL', 'COL-B': 'PASS' }, { [RTP]: { count: 40, p50: 15, p95: 45 } }));
  appendFileSync(file, '{"cut off\n');
  appendHistory(
    file,
    record(
      '2026-03-12T02:00:00.000Z',
      { 'COL-A': 'FLAKY', 'COL-B': 'PASS' },
      { [RTP]: { count: 41, p50: 11, p95: 90 } },
      { target: HOSTILE, scenarios: { [PAYMENT]: 'flaky' } },
    ),
  );
  appendHistory(
    file,
    record(
      '2026-03-12T14:30:00.000Z',
      { 'COL-A': 'NOT TESTED', 'COL-B': 'NOT TESTED' },
      {},
      { scenarios: { [PAYMENT]: 'not tested' }, exitCode: 2, outcome: 'could not test' },
    ),
  );
  const page = join(dir, 'index.html');
  writeFileSync(page, renderTrend(readHistory(file), 'history.ndjson'));

  const browser = await chromium.launch({ executablePath, headless: true });
  try {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, javaScriptEnabled: true });
    const tab = await context.newPage();
    const fetched = await refuseNetwork(tab);
    await tab.goto(pathToFileURL(page).href);

    // The page opens with what the last run changed, naming both runs by date and time.
    const changes = tab.locator('main > section').first();
    assert.equal(await changes.getAttribute('id'), 'changes');
    const changed = await changes.innerText();
    assert.match(changed, /The last run, 2026-03-12 14:30, compared with the run before it, 2026-03-12 02:00\./);
    assert.match(changed, /The outcome changed from conforms \(exit 0\) to could not test \(exit 2\)\./);
    assert.match(changed, new RegExp(`1 scenario could not be tested \\(the target did not answer\\):\\s+${PAYMENT} \\(flaky before\\)`));

    const row = tab.locator('#requirements tr[data-requirement="COL-A"]');
    await row.waitFor({ state: 'visible' });
    const nights = await row.locator('td.cell').evaluateAll((cells) => cells.map((c) => c.className.replace('cell ', '')));
    assert.deepEqual(nights, ['s-passed', 's-failed', 's-flaky', 's-not-tested']);
    assert.deepEqual(await row.locator('td.n').allInnerTexts(), ['1', '1', '1', '1'], 'passed, failed, flaky, not tested: one night each');
    assert.match(await tab.locator('#corrupt').innerText(), /line 3: not JSON/);

    // The chart: a p50 and a p95 line through the three runs that called the operation, the p95 higher on screen.
    const chart = tab.locator(`figure[data-operation="${RTP}"] svg`);
    assert.equal(await chart.locator('circle.p50').count(), 3);
    assert.equal(await chart.locator('circle.p95').count(), 3);
    const box = await chart.boundingBox();
    assert.ok(box && box.width > 0 && box.height > 0, 'the chart is drawn');
    const [p50y, p95y] = await Promise.all(['p50', 'p95'].map((k) => chart.locator(`circle.${k}`).nth(2).getAttribute('cy')));
    assert.ok(Number(p95y) < Number(p50y), "the third night's p95 (90 ms) is above its p50 (11 ms)");
    assert.match(
      (await chart.locator('circle.p95').nth(2).locator('title').textContent()) ?? '',
      /^2026-03-12 02:00: p95 90 ms \(41 responses\)$/,
    );
    assert.deepEqual(await chart.locator('text.axis-title').allTextContents(), ['response time (ms)', 'run']);
    assert.deepEqual(await chart.locator('text.tick[text-anchor="end"]').allTextContents(), ['0', '20', '40', '60', '80', '100']);

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

test('a year of nightly runs (the page draws the last hundred): the names under the x axis are thinned out, none overlaps another or leaves the chart', async (t) => {
  const executablePath = chromiumOrSkip(t);
  if (!executablePath) return;
  const dir = mkdtempSync(join(tmpdir(), 'momo-trend-'));
  const runs = Array.from({ length: 365 }, (_, i) =>
    record(
      new Date(Date.UTC(2026, 0, 1, 2) + i * 86_400_000).toISOString(),
      {},
      { [RTP]: { count: 40, p50: 10 + (i % 7), p95: 30 + (i % 50) } },
    ),
  );
  const page = join(dir, 'index.html');
  writeFileSync(page, renderTrend({ records: runs, corrupt: [] }, 'history.ndjson'));
  const browser = await chromium.launch({ executablePath, headless: true });
  try {
    const tab = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
    await tab.goto(pathToFileURL(page).href);
    const chart = tab.locator(`figure[data-operation="${RTP}"] svg`);
    const svg = (await chart.boundingBox())!;
    const names = await chart.locator('text.tick[text-anchor="middle"]').evaluateAll((ticks) =>
      ticks.map((tick) => ({
        text: tick.textContent,
        ...(JSON.parse(JSON.stringify((tick as SVGGraphicsElement).getBoundingClientRect())) as DOMRect),
      })),
    );
    assert.ok(names.length >= 4 && names.length < 100, `${names.length} runs named`);
    assert.equal(names.at(-1)!.text, '2026-12-3102:00', 'the last run is named');
    for (const [i, name] of names.entries()) {
      assert.ok(name.left >= svg.x && name.right <= svg.x + svg.width, `${name.text} is inside the chart`);
      if (i > 0) assert.ok(name.left > names[i - 1]!.right, `${names[i - 1]!.text} and ${name.text} do not overlap`);
    }
  } finally {
    await browser.close();
  }
});
