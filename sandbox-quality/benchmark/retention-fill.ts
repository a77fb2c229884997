import { getHeapStatistics } from 'node:v8';
import pino from 'pino';
import { buildSandbox } from '../../sandbox/app.ts';
import { resolveSettings } from '../../sandbox/domain/settings.ts';
import { SILENT_CALLBACKS, fillEveryStore } from './fill-stores.ts';

/**
 * The measurement behind docs/sandbox.md's "Reliability": a sandbox with its default settings, in a Node process with its
 * default heap, filled with maximal records until every creation answers 503. It prints the heap that the
 * records hold beside the budget they were counted against, and exits 1 if a creation got anything but success
 * or 503 with Retry-After.
 *
 *   node --expose-gc --import tsx sandbox-quality/benchmark/retention-fill.ts [--retention-max-bytes N]
 */
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  console.error('Run with node --expose-gc, so that the heap is read after a collection.');
  process.exit(2);
}
const MIB = 1024 * 1024;
const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;

// Consents are granted at once so that the grant store fills as fast as the others; it changes no record's size.
const settings = resolveSettings({
  argv: process.argv.slice(2),
  env: process.env,
  overrides: { logLevel: 'silent', consentIntervalSeconds: 0 },
});
const sandbox = await buildSandbox(settings, { logger: pino({ level: 'silent' }), plugins: [SILENT_CALLBACKS] });
gc();
const before = process.memoryUsage().heapUsed;
const started = Date.now();
const result = await fillEveryStore(sandbox);
const seconds = (Date.now() - started) / 1000;
gc();
const after = process.memoryUsage();
const { budget } = sandbox.context.state;
const held = after.heapUsed - before;
console.log(`heap limit ${mib(getHeapStatistics().heap_size_limit)}; budget --retention-max-bytes ${mib(budget.maxBytes)}`);
console.log(`${result.requests} requests in ${seconds.toFixed(1)} s; records by store (stored / refused with 503):`);
for (const [store, counts] of Object.entries(result.byStore))
  console.log(`  ${store.padEnd(20)} ${String(counts.stored).padStart(8)} / ${counts.full}`);
console.log(
  `estimated ${mib(budget.used)}; heap held by the records ${mib(held)} (${(held / budget.used).toFixed(2)} of the estimate); heap used ${mib(after.heapUsed)}, RSS ${mib(after.rss)}`,
);
if (result.unexpected.length > 0) console.log(`unexpected answers:\n  ${result.unexpected.join('\n  ')}`);
await sandbox.close();
process.exit(result.unexpected.length > 0 || held > budget.used ? 1 : 0);
