import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { chromiumOnPath, refuseNetwork } from '../support/browser.ts';
import { capacityHtml } from '../../load/runner/capacity-report.ts';
import { reportOf, stepAt } from '../support/capacity.ts';

const SCREENSHOTS = new URL('../../reports/', import.meta.url).pathname;

test('the capacity page opens in headless Chromium, fetching nothing and running no script: verdict on top, charts as SVG, text escaped', async (t) => {
  const executablePath = chromiumOnPath();
  if (!executablePath) {
    if (process.env.CI) assert.fail('Chromium is not installed: scripts/ensure-chromium.sh installs it (CI runs it before the tests).');
    t.skip('Chromium is not installed: run scripts/ensure-chromium.sh');
    return;
  }
  // A mix name a hostile user could have typed, and a target's text in an observed value.
  const hostile = '<img src=x onerror="window.hacked=1"></script><script>window.hacked=2</script>';
  const steps = [100, 200, 400, 800, 1600, 1200, 1000, 1100].map((rate) =>
    stepAt(
      rate,
      1000,
      rate > 1000
        ? {
            thresholds: [
              { slo: 'p95Ms', metric: 'http_req_duration{op:requestToPay}', expression: 'p(95)<250', observed: hostile, passed: false },
            ],
            latencyLowerBound: rate === 1600,
            dropped: rate === 1600 ? 90 : 0,
          }
        : {},
    ),
  );
  const report = reportOf(steps, hostile);
  const dir = mkdtempSync(join(tmpdir(), 'momo-capacity-page-'));
  writeFileSync(join(dir, 'index.html'), capacityHtml(report));

  const browser = await chromium.launch({ executablePath, headless: true });
  try {
    const page = await browser.newPage({ viewport: { width: 1300, height: 1000 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const fetched = await refuseNetwork(page);
    await page.goto(pathToFileURL(join(dir, 'index.html')).href);

    // The verdict is the first thing under the title.
    const verdict = page.locator('#verdict');
    assert.equal(await verdict.innerText(), report.verdict.sentence);
    assert.match(report.verdict.sentence, /^1000\/s: at 1100\/s the target broke the SLO on/);
    const firstBlock = await page.evaluate(() => document.body.children[1]?.id);
    assert.equal(firstBlock, 'verdict');

    // The chart against the rate asked: throughput and four percentiles, one point per step; points of missed
    // rates open, latency a full VU pool capped drawn as a lower bound.
    const chart = page.locator('#capacity-chart svg');
    assert.equal(await chart.locator('polyline.series').count(), 5, 'answered, p50, p95, p99, p99.9');
    assert.equal(await chart.locator('.point').count(), 5 * steps.length);
    assert.equal(await chart.locator('.point[fill="#fff"]').count(), 5 * 3, 'three rates missed');
    assert.equal(await chart.locator('.lower-bound').count(), 4, 'the latency of 1600/s, each percentile');
    assert.equal(await page.locator('.timeline svg').count(), 2, 'the capacity and the first rate missed, over their windows');
    assert.equal(await page.locator('#steps tr.held, #steps tr.missed').count(), steps.length);
    assert.match(await page.locator('#steps').innerText(), /≥ 400\.0 ms/, 'a capped p95 reads as at least');
    assert.match(await page.locator('#throughput').innerText(), /stops rising between 1000\/s and 1100\/s/);
    assert.equal(await page.locator('script').count(), 0);
    // Text is text: the hostile name shows as typed, and nothing of it ran.
    assert.ok((await page.locator('h1').innerText()).includes(hostile));
    assert.equal(await page.evaluate(() => (window as unknown as { hacked?: number }).hacked), undefined);
    assert.equal(await page.locator('img').count(), 0);
    assert.deepEqual(errors, []);
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'capacity-page.png'), fullPage: true });
    assert.deepEqual(fetched, [], 'the page is self-contained');
  } finally {
    await browser.close();
  }
});
