/**
 * What a runner pod of the k6-operator would run, run here: the TestRun that load-k8s writes, its arguments and
 * its environment, given to the k6 the project builds (the version its image is pinned to). Its samples reach a
 * Prometheus remote-write endpoint (a stand-in that keeps the requests), trends as native histograms, with the
 * run's testid on every series: what a Prometheus query of the run's global percentiles reads (docs/capacity.md).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { BUNDLE_DIR } from '../../load/build.ts';
import { main } from '../../load/runner/k8s.ts';
import { PACKAGE_ROOT } from '../../core/package.ts';
import { startEmbeddedSandbox } from '../../sandbox/start.ts';

/** Snappy's block format (what remote write sends): a varint length, then literals and back-references. */
function unsnappy(input: Buffer): Buffer {
  let i = 0;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    const byte = input[i++]!;
    length |= (byte & 0x7f) << shift;
    if (byte < 0x80) break;
  }
  const out = Buffer.alloc(length);
  let o = 0;
  while (i < input.length) {
    const tag = input[i++]!;
    if ((tag & 3) === 0) {
      let n = tag >> 2;
      if (n >= 60) {
        const bytes = n - 59;
        n = input.readUIntLE(i, bytes);
        i += bytes;
      }
      input.copy(out, o, i, i + n + 1);
      i += n + 1;
      o += n + 1;
      continue;
    }
    let n: number;
    let offset: number;
    if ((tag & 3) === 1) {
      n = 4 + ((tag >> 2) & 7);
      offset = ((tag >> 5) << 8) | input[i++]!;
    } else if ((tag & 3) === 2) {
      n = 1 + (tag >> 2);
      offset = input.readUInt16LE(i);
      i += 2;
    } else {
      n = 1 + (tag >> 2);
      offset = input.readUInt32LE(i);
      i += 4;
    }
    for (let k = 0; k < n; k += 1, o += 1) out[o] = out[o - offset]!;
  }
  return out;
}

test('a runner of the TestRun, on the pinned k6, sends its samples to Prometheus remote write, trends as native histograms', {
  timeout: 120_000,
}, async () => {
  const k6 = spawnSync('bash', [join(PACKAGE_ROOT, 'scripts/ensure-k6.sh')], { encoding: 'utf8' }).stdout.trim();
  const version = /^k6 v(\d+\.\d+\.\d+)/m.exec(spawnSync(k6, ['version'], { encoding: 'utf8' }).stdout)![1];

  const bodies: Buffer[] = [];
  const encodings: (string | undefined)[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks));
      encodings.push(req.headers['content-encoding']);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  const sandbox = await startEmbeddedSandbox();
  try {
    const out = mkdtempSync(join(tmpdir(), 'momo-k8s-run-'));
    const lines: string[] = [];
    const rw = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/api/v1/write`;
    const code = await main(
      ['smoke', '--parallelism', '1', '--base-url', sandbox.baseUrl, '--prometheus-rw', rw, '--env', 'LOAD_ITERATIONS=2', '--out', out],
      { PATH: process.env.PATH },
      (l) => lines.push(l),
      (l) => lines.push(l),
    );
    assert.equal(code, 0, lines.join('\n'));
    const testRun = parse(readFileSync(join(out, 'testrun.yaml'), 'utf8')) as {
      spec: {
        arguments: string;
        runner: {
          image: string;
          env: { name: string; value?: string; valueFrom?: { secretKeyRef: { key: 'collection' | 'disbursement' | 'remittance' } } }[];
        };
      };
    };
    assert.equal(testRun.spec.runner.image, `grafana/k6:${version}`, 'the image is the k6 the project builds');

    // The pod's environment: the plain values as written, the keys as the Secret would give them.
    const env: Record<string, string> = { PATH: process.env.PATH!, HOME: process.env.HOME!, K6_PROMETHEUS_RW_PUSH_INTERVAL: '500ms' };
    for (const e of testRun.spec.runner.env) env[e.name] = e.value ?? sandbox.subscriptionKeys[e.valueFrom!.secretKeyRef.key];
    const args = ['run', ...testRun.spec.arguments.split(' '), '--quiet', join(BUNDLE_DIR, 'smoke.js')];
    const exit = await new Promise<number>((resolve) => spawn(k6, args, { env, stdio: 'ignore' }).on('close', (c) => resolve(c ?? 2)));
    assert.equal(exit, 0, `k6 ${args.join(' ')}`);

    assert.ok(bodies.length > 0, 'the endpoint was written to');
    assert.ok(encodings.every((e) => e === 'snappy'));
    const written = bodies.map((b) => unsnappy(b).toString('latin1')).join('');
    // Label names and values stand in the protobuf as plain bytes.
    assert.match(written, /k6_http_req_duration_seconds/, 'the latency trend as a native histogram, in seconds');
    assert.doesNotMatch(written, /k6_http_req_duration_p95/, 'not as per-pod percentiles, which cannot be merged');
    assert.match(written, /k6_http_reqs_total/);
    assert.match(written, /testid[\s\S]{1,4}momo-load-smoke/, "every series carries the run's testid");
    assert.match(written, /op[\s\S]{1,4}createAccessToken/, 'and the operation');
  } finally {
    await sandbox.close();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
});
