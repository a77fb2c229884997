/**
 * The k6-operator manifests of `momo-harness load-k8s`, without a cluster: the TestRun against the CRD schema of
 * the operator's release kept in k6-operator/ (SOURCE.md), the ConfigMap holding the bundle to the byte, the
 * settings and the mix passed, and bad input refused with what to fix.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { BUNDLE_DIR } from '../../load/build.ts';
import { CONFIGMAP_LIMIT_BYTES, main } from '../../load/runner/k8s.ts';

const CRD = new URL('./k6-operator/k6.io_testruns.yaml', import.meta.url);
const CRD_SHA256 = 'd4df597bb94d210bcb9368dd4faf81da25c08194e240da98e4df8887563be185';

type Schema = Record<string, unknown> & { properties?: Record<string, Schema>; items?: Schema; additionalProperties?: unknown };

/**
 * The CRD's OpenAPI schema as JSON Schema for Ajv, each object that names its properties closed: the API server
 * prunes what a structural schema does not name, so a field it would drop is a field this test refuses.
 */
function closed(schema: Schema): Schema {
  const copy: Schema = { ...schema };
  if (copy.properties) {
    copy.properties = Object.fromEntries(Object.entries(copy.properties).map(([k, v]) => [k, closed(v)]));
    if (copy.additionalProperties === undefined && !copy['x-kubernetes-preserve-unknown-fields']) copy.additionalProperties = false;
  }
  if (copy.items) copy.items = closed(copy.items);
  if (copy.additionalProperties && typeof copy.additionalProperties === 'object')
    copy.additionalProperties = closed(copy.additionalProperties as Schema);
  return copy;
}

function testRunValidator() {
  const text = readFileSync(CRD);
  assert.equal(createHash('sha256').update(text).digest('hex'), CRD_SHA256, 'k6.io_testruns.yaml is the copy SOURCE.md names');
  const crd = parse(text.toString('utf8')) as { spec: { versions: { name: string; schema: { openAPIV3Schema: Schema } }[] } };
  const version = crd.spec.versions.find((v) => v.name === 'v1alpha1')!;
  // The Kubernetes keywords (x-kubernetes-*) and formats (int32, int64) are not JSON Schema's: Ajv passes over them.
  const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
  return ajv.compile(closed(version.schema.openAPIV3Schema));
}

async function manifests(argv: string[], env: Record<string, string> = {}) {
  const out = mkdtempSync(join(tmpdir(), 'momo-k8s-'));
  const lines: string[] = [];
  const code = await main(
    [...argv, '--out', out],
    env,
    (line) => lines.push(line),
    (line) => lines.push(line),
  );
  if (code !== 0) return { code, lines };
  return {
    code,
    lines,
    configMapText: readFileSync(join(out, 'configmap.yaml'), 'utf8'),
    configMap: parse(readFileSync(join(out, 'configmap.yaml'), 'utf8')) as { data: Record<string, string> },
    testRun: parse(readFileSync(join(out, 'testrun.yaml'), 'utf8')) as {
      spec: Record<string, unknown> & {
        runner: { image: string; env: { name: string; value?: string; valueFrom?: unknown }[]; resources?: unknown };
      };
    },
  };
}

const IMAGE = ['--image', 'grafana/k6:1.8.1'];

test('the TestRun follows the CRD of k6-operator v1.6.0, with the settings, the mix, the image, resources, separate and cleanup', async () => {
  const validate = testRunValidator();
  const written = await manifests(
    [
      'capacity',
      '--parallelism',
      '4',
      '--base-url',
      'https://momo.example.test',
      '--mix',
      'requestToPay:3,deposit:1',
      '--rate',
      '400',
      '--duration',
      '60',
      '--vus',
      '300',
      '--env',
      'LOAD_FOLLOW_SHARE=0.1',
      '--cpu',
      '2',
      '--memory',
      '2Gi',
      '--separate',
      '--cleanup',
      '--prometheus-rw',
      'http://prometheus.monitoring:9090/api/v1/write',
      ...IMAGE,
    ],
    { LOAD_WARMUP_SECONDS: '5', LOAD_NOT_READ_BY_CAPACITY: 'x', PATH: '/bin' },
  );
  assert.equal(written.code, 0, written.lines.join('\n'));
  const { testRun } = written;
  assert.ok(validate(testRun), JSON.stringify(validate.errors, null, 2));
  assert.equal(testRun!.spec.parallelism, 4);
  assert.equal(testRun!.spec.separate, true);
  assert.equal(testRun!.spec.cleanup, 'post');
  assert.equal(testRun!.spec.runner.image, 'grafana/k6:1.8.1');
  assert.deepEqual(testRun!.spec.runner.resources, { requests: { cpu: '2', memory: '2Gi' }, limits: { cpu: '2', memory: '2Gi' } });
  assert.match(String(testRun!.spec.arguments), /--out experimental-prometheus-rw/);
  const env = Object.fromEntries(testRun!.spec.runner.env.map((e) => [e.name, e.value ?? e.valueFrom]));
  assert.deepEqual(
    {
      mix: env.LOAD_MIX,
      rate: env.LOAD_RATE,
      duration: env.LOAD_DURATION_SECONDS,
      vus: env.LOAD_VUS,
      follow: env.LOAD_FOLLOW_SHARE,
      warmup: env.LOAD_WARMUP_SECONDS,
    },
    { mix: 'requestToPay:3,deposit:1', rate: '400', duration: '60', vus: '300', follow: '0.1', warmup: '5' },
    'the options, --env and the LOAD_* variables of the environment the scenario reads',
  );
  assert.equal(env.LOAD_NOT_READ_BY_CAPACITY, undefined, 'a variable the scenario does not read is not passed');
  assert.equal(env.K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM, 'true');
  assert.deepEqual(env.MOMO_COLLECTION_KEY, { secretKeyRef: { name: 'momo-keys', key: 'collection' } }, 'keys come from the Secret');
  assert.doesNotMatch(JSON.stringify(testRun), /sandbox-collection-key/);

  // The validator does refuse: a field the CRD does not name, and a value it does not allow.
  assert.equal(validate({ ...testRun, spec: { ...testRun!.spec, parallelsm: 2 } }), false);
  assert.equal(validate({ ...testRun, spec: { ...testRun!.spec, cleanup: 'always' } }), false);
});

test('the ConfigMap holds the bundle to the byte, within what a ConfigMap may hold; the instructions apply it server-side', async () => {
  const written = await manifests(['capacity', '--parallelism', '2', '--base-url', 'http://momo:8080', ...IMAGE]);
  assert.equal(written.code, 0, written.lines.join('\n'));
  const bundle = readFileSync(join(BUNDLE_DIR, 'capacity.js'), 'utf8');
  assert.equal(written.configMap!.data['capacity.js'], bundle);
  const bytes = Buffer.byteLength(bundle);
  assert.ok(bytes <= CONFIGMAP_LIMIT_BYTES, `${bytes} bytes`);
  // Over the 262,144 bytes of the annotation a client-side apply writes: only a server-side apply (or create) works.
  assert.ok(Buffer.byteLength(written.configMapText!) > 262_144);
  const instructions = written.lines.join('\n');
  assert.match(instructions, /kubectl apply --server-side -f \S+\/configmap\.yaml/);
  assert.doesNotMatch(instructions.replace(/kubectl apply --server-side/g, ''), /kubectl apply -f/);
});

test('bad input to load-k8s is refused with what to fix, exit 2', async () => {
  const refused = async (argv: string[]) => {
    const { code, lines } = await manifests(argv);
    assert.equal(code, 2, lines.join('\n'));
    return lines.join('\n');
  };
  const base = ['--parallelism', '2', '--base-url', 'http://momo:8080', ...IMAGE];
  assert.match(
    await refused(['capacity', ...base, '--env', 'LOAD_RAET=5']),
    /--env "LOAD_RAET=5": write LOAD_<NAME>=value.*did you mean LOAD_RATE\?/,
  );
  assert.match(
    await refused(['capacity', ...base, '--env', 'MOMO_COLLECTION_KEY=secret']),
    /--env "MOMO_COLLECTION_KEY=secret": write LOAD_<NAME>=value/,
  );
  assert.match(await refused(['smoke', ...base, '--mix', 'token']), /--mix: the smoke scenario does not read LOAD_MIX/);
  assert.match(
    await refused(['capacity', ...base, '--mix', 'requestToPay:x']),
    /--mix: "requestToPay:x" is not a mix: the share of requestToPay must be a positive number, got "x"; write e.g. --mix request-to-pay/,
  );
  assert.match(
    await refused(['capacity', ...base, '--cpu', 'two']),
    /--cpu: "two" is not a Kubernetes quantity such as 2 or 1500m; write e.g. --cpu 2/,
  );
  assert.match(
    await refused(['capacity', ...base, '--prometheus-rw', 'prometheus:9090']),
    /--prometheus-rw: "prometheus:9090" is not an http\(s\) URL; write e.g. --prometheus-rw http:\/\/prometheus:9090\/api\/v1\/write/,
  );
  assert.match(
    await refused(['capacity', '--parallelism', '0', '--base-url', 'http://momo:8080']),
    /--parallelism: "0" is not a whole number from 1 to 1000; write e.g. --parallelism 4/,
  );
  assert.match(await refused(['capacity', ...base, '--seperate']), /unknown option --seperate; did you mean --separate\?/);
});
