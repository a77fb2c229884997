import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kneeOf, saturationOf, searchCapacity, verdictOf } from '../../load/runner/capacity-search.ts';
import { capacityHtml, capacityJunit } from '../../load/runner/capacity-report.ts';
import { reportOf, SETTINGS, stepAt } from '../support/capacity.ts';
import { validatorFor } from '../../core/validation/schemas.ts';
import { parseXml } from '../support/reports.ts';

test('the search steps up geometrically, then bisects between the last rate held and the first missed', async () => {
  const rates: number[] = [];
  const outcome = await searchCapacity(
    SETTINGS,
    async (rate) => {
      rates.push(rate);
      return stepAt(rate, 1000);
    },
    () => {},
  );
  assert.deepEqual(rates.slice(0, 5), [100, 200, 400, 800, 1600]);
  assert.deepEqual(rates.slice(5), [1200, 1000, 1100]);
  assert.equal(outcome.ended, 'narrowed');
  const verdict = verdictOf(outcome, SETTINGS);
  assert.equal(verdict.capacity, 1000);
  assert.equal(verdict.generatorLimited, false);
  assert.match(verdict.sentence, /^1000\/s: at 1100\/s the target broke the SLO on p95 latency/);
});

test('a first step that misses is followed by steps down; the search stops before its time limit', async () => {
  const down = await searchCapacity(
    SETTINGS,
    async (rate) => stepAt(rate, 30),
    () => {},
  );
  assert.deepEqual(
    down.steps.map((s) => s.rate),
    [100, 50, 25, 38, 32, 29, 31],
  );
  let clock = 0;
  const lines: string[] = [];
  const timed = await searchCapacity(
    { ...SETTINGS, maxDurationMs: 50_000 },
    async (rate) => {
      clock += 12_000;
      return stepAt(rate, 1e6);
    },
    (line) => lines.push(line),
    () => clock,
  );
  assert.equal(timed.ended, 'time');
  assert.equal(timed.steps.length, 3, 'a fourth step of 12 s would end after 50 s');
  assert.match(lines[0]!, /^\[capacity 12s\/50s\] step 1: 100\/s .* held$/);
  assert.match(
    verdictOf(timed, SETTINGS).sentence,
    /^At least 400\/s: every rate measured met the SLOs \(the search ended at its time limit\)/,
  );
});

test('the generator is named when k6 dropped iterations with VUs free, or ran out of CPU', async () => {
  const dropped = (rate: number) =>
    stepAt(
      rate,
      1e6,
      rate > 800
        ? {
            dropped: 50,
            thresholds: [
              { slo: 'maxDroppedIterations', metric: 'dropped_iterations', expression: 'count<=0', observed: 'count=50', passed: false },
            ],
          }
        : {},
    );
  const verdict = verdictOf(
    await searchCapacity(
      SETTINGS,
      async (rate) => dropped(rate),
      () => {},
    ),
    SETTINGS,
  );
  assert.match(verdict.sentence, /^At least 8\d\d\/s: the generator, not the target, ran out/);
  // The same dropped iterations, with the target's latency keeping every VU busy, are the target's.
  const busy = (rate: number) =>
    dropped(rate).dropped ? { ...dropped(rate), iterationMeanMs: 500, vusExhausted: true, vusPeak: 200 } : dropped(rate);
  const target = verdictOf(
    await searchCapacity(
      SETTINGS,
      async (rate) => busy(rate),
      () => {},
    ),
    SETTINGS,
  );
  assert.equal(target.generatorLimited, false);
  assert.match(target.sentence, /kept all 200 VUs busy/);
  const cpu = verdictOf(
    await searchCapacity(
      SETTINGS,
      async (rate) => stepAt(rate, 1000, rate > 1000 ? { generatorCores: 1.9 } : {}),
      () => {},
    ),
    SETTINGS,
  );
  assert.equal(cpu.generatorLimited, true);
});

test('the knee is the lowest rate from which every rate measured rose past k times the lowest p95, by at least 5 ms', () => {
  const steps = [100, 200, 400, 800, 1600].map((r) => stepAt(r, 1000));
  assert.deepEqual({ below: kneeOf(steps, 3).below, above: kneeOf(steps, 3).above }, { below: 400, above: 800 });
  const latency = (p95: number) => ({ p50: 1, p90: p95, p95, p99: p95, p999: p95, max: p95 });
  const flat = [100, 200].map((r) => stepAt(r, 1e6, { latencyMs: latency(r === 100 ? 1 : 4) }));
  assert.equal(kneeOf(flat, 3).above, null, 'a rise of 3 ms is noise, not a knee');
  // One slow step among flat ones (a collection, a neighbour's burst) sets no knee: the rates above it did not rise.
  const noisy = [100, 200, 300, 350].map((r) => stepAt(r, 1e6, { latencyMs: latency(r === 200 ? 30 : 5) }));
  assert.equal(kneeOf(noisy, 3).above, null);
  // A rise measured once is reported as such; measured twice, it is confirmed, and the lesser p95 of the two counts.
  const rising = [100, 200, 400].map((r) => stepAt(r, 500));
  assert.deepEqual(kneeOf(rising, 3, 1), { ...kneeOf(rising, 3, 1), above: 400, confirmed: false });
  assert.equal(kneeOf([...rising, stepAt(400, 500)], 3, 1).confirmed, true);
  assert.equal(
    kneeOf([...rising, stepAt(400, 500, { latencyMs: latency(2) })], 3, 1).above,
    null,
    'a rise that did not show again is no knee',
  );
});

test('a rise of latency is measured again before it sets the knee, and the same target gives the same knee every time', async () => {
  const settings = { ...SETTINGS, confirmMisses: 1 };
  const lines: string[] = [];
  const outcome = await searchCapacity(
    settings,
    async (rate) => stepAt(rate, 1000),
    (line) => lines.push(line),
  );
  // 800/s held with p95 40 ms, 20× the 2 ms of 400/s: measured again before it sets the knee.
  assert.deepEqual(outcome.steps.map((s) => s.rate).slice(0, 5), [100, 200, 400, 800, 800]);
  assert.match(lines[3]!, /step 4: 800\/s .* held; latency rose past the knee: measuring this rate again before it sets the knee$/);
  const knees = await Promise.all(
    [1, 2, 3].map(async () =>
      kneeOf(
        (
          await searchCapacity(
            settings,
            async (rate) => stepAt(rate, 1000),
            () => {},
          )
        ).steps,
        3,
        1,
      ),
    ),
  );
  assert.deepEqual(new Set(knees.map((k) => `${k.below}-${k.above}-${k.confirmed}`)), new Set(['400-800-true']));
});

test('throughput stops rising where the rate asked is no longer answered: the saturation and the peak', () => {
  const saturation = saturationOf([100, 200, 400, 800, 1600, 1200, 1000, 1100].map((r) => stepAt(r, 1000)));
  assert.equal(saturation.keptUpTo, 1000);
  assert.equal(saturation.fellBehindAt, 1100, 'from 1100/s on, less than 95% of the rate was answered');
  assert.equal(saturation.peakThroughput, 1020);
  const unsaturated = saturationOf([100, 200].map((r) => stepAt(r, 1000)));
  assert.deepEqual([unsaturated.keptUpTo, unsaturated.fellBehindAt], [200, null]);
});

test('capacity.json follows its schema, and JUnit has one test case per SLO at the capacity, well-formed for any text', () => {
  const report = reportOf([100, 200, 400, 800, 1600].map((r) => stepAt(r, 1000)));
  const validate = validatorFor('capacity-report');
  assert.ok(validate(JSON.parse(JSON.stringify(report))), JSON.stringify(validate.errors));
  assert.equal(validate({ ...report, extra: 1 }), false, 'strict: no property the schema does not name');

  const hostile = 'x]]><y a="&\'">\u0000\u001b\uD800 </testsuite>';
  const steps = [100, 200].map((r) =>
    stepAt(r, 1000, {
      thresholds: [{ slo: 'p95Ms', metric: `http_req_duration{op:${hostile}}`, expression: hostile, observed: hostile, passed: r === 100 }],
    }),
  );
  const xml = capacityJunit(reportOf(steps, hostile));
  const document = parseXml(xml);
  assert.ok(document);
  assert.doesNotMatch(xml, /[\u0000\u001b]|\uD800/);
  assert.equal((xml.match(/<testcase /g) ?? []).length, 1, 'one test case per threshold at 200/s');
  const html = capacityHtml(reportOf(steps, hostile));
  assert.doesNotMatch(html, /<y a=|<\/testsuite>/, 'text is escaped');
  assert.doesNotMatch(html, /<script/, 'the page runs no script: its charts are drawn as SVG when it is written');
});

test('a missed rate is measured again before the search takes the miss, and a rate that then holds is said so', async () => {
  const confirming = { ...SETTINGS, confirmMisses: 1 };
  // A passing event at 200/s (a collection, a cold cache): it misses the first time only.
  const seen = new Map<number, number>();
  const transient = async (rate: number) => {
    seen.set(rate, (seen.get(rate) ?? 0) + 1);
    return rate === 200 && seen.get(rate) === 1 ? stepAt(rate, 0) : stepAt(rate, 1000);
  };
  const lines: string[] = [];
  const outcome = await searchCapacity(confirming, transient, (line) => lines.push(line));
  // 800/s is measured twice too: its p95 rose past the knee.
  assert.deepEqual(
    outcome.steps.map((s) => s.rate),
    [100, 200, 200, 400, 800, 800, 1600, 1600, 1200, 1200, 1000, 1100, 1100],
  );
  assert.match(lines[1]!, /step 2: 200\/s .* MISSED p95 latency; measuring this rate again before taking the miss$/);
  assert.match(lines[2]!, /step 3: 200\/s .* held$/);
  const verdict = verdictOf(outcome, confirming);
  assert.equal(verdict.capacity, 1000);
  assert.match(
    verdict.sentence,
    /^1000\/s: at 1100\/s the target broke the SLO on p95 latency\. 200\/s missed once and held when measured again\.$/,
  );

  // Unconfirmed, the same passing event decides the whole search.
  seen.clear();
  const hasty = verdictOf(await searchCapacity(SETTINGS, transient, () => {}), SETTINGS);
  assert.ok(hasty.capacity! < 200, `without confirmation the search settles below the miss: ${hasty.capacity}`);
});
