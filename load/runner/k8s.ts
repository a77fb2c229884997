import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CommandLineError, parseCommandLine, type OptionSpecs } from '../../core/command-line.ts';
import { BUNDLE_DIR, buildLoadScripts, scenarioNames } from '../build.ts';
import { PRODUCTS } from '../../core/products.ts';

const USAGE = `Usage: momo-harness load-k8s <scenario> --parallelism <n> --base-url <url> [--sandbox-url <url>] [--out <dir>]

Writes the k6-operator manifests that run a load scenario on Kubernetes, split over <n> runner pods with
execution segments: a ConfigMap holding the bundled script and a TestRun. The subscription keys are read
from a Secret named momo-keys (keys: collection, disbursement, remittance), never written to a manifest:
  kubectl create secret generic momo-keys --from-literal=collection=... --from-literal=disbursement=... --from-literal=remittance=...
  kubectl apply -f <out>/configmap.yaml -f <out>/testrun.yaml`;

export interface Manifests {
  configMap: string;
  testRun: string;
}

/** The two manifests for a scenario; `script` is the bundle's text. */
export function k6OperatorManifests(scenario: string, script: string, options: { parallelism: number; baseUrl: string; sandboxUrl?: string; env?: Record<string, string> }): Manifests {
  const name = `momo-load-${scenario}`;
  const file = `${scenario}.js`;
  const indented = script.split('\n').map((line) => (line ? `    ${line}` : '')).join('\n');
  const configMap = [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    `  name: ${name}`,
    '  labels:',
    '    app.kubernetes.io/part-of: momo-conformance-harness',
    'data:',
    `  ${file}: |`,
    indented,
    '',
  ].join('\n');
  const plain: Record<string, string> = {
    MOMO_BASE_URL: options.baseUrl,
    MOMO_SANDBOX_URL: options.sandboxUrl ?? options.baseUrl,
    ...options.env,
  };
  const envLines = [
    ...Object.entries(plain).map(([k, v]) => [`        - name: ${k}`, `          value: ${JSON.stringify(v)}`]).flat(),
    ...PRODUCTS.map((p) => [
      `        - name: MOMO_${p.toUpperCase()}_KEY`,
      '          valueFrom:',
      '            secretKeyRef:',
      '              name: momo-keys',
      `              key: ${p}`,
    ]).flat(),
  ];
  const testRun = [
    'apiVersion: k6.io/v1alpha1',
    'kind: TestRun',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    // The operator gives each of the runners one execution segment of the same script.
    `  parallelism: ${options.parallelism}`,
    '  script:',
    '    configMap:',
    `      name: ${name}`,
    `      file: ${file}`,
    `  arguments: --no-usage-report --tag testid=${name}`,
    '  runner:',
    '    env:',
    ...envLines,
    '',
  ].join('\n');
  return { configMap, testRun };
}

/** The options of `momo-harness load-k8s`, as USAGE describes them. */
export const K8S_OPTIONS = { parallelism: { type: 'string' }, 'base-url': { type: 'string' }, 'sandbox-url': { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean' } } as const satisfies OptionSpecs;

export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandLine(argv, K8S_OPTIONS, { positionals: true });
  } catch (error) {
    if (!(error instanceof CommandLineError)) throw error;
    console.error(`${error.message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const scenario = positionals[0];
  const parallelism = Number(values.parallelism);
  const problems = [
    ...(!scenario || !scenarioNames().includes(scenario) ? [`name a scenario: ${scenarioNames().join(', ')}`] : []),
    ...(!Number.isInteger(parallelism) || parallelism < 1 || parallelism > 1000 ? ['--parallelism must be a whole number from 1 to 1000'] : []),
    ...(!values['base-url'] || !/^https?:\/\//.test(values['base-url']) ? ['--base-url must be the http(s) URL the runner pods reach the target at'] : []),
  ];
  if (problems.length > 0) {
    console.error(`${problems.join('; ')}.\n\n${USAGE}`);
    return 2;
  }
  await buildLoadScripts();
  const script = readFileSync(join(BUNDLE_DIR, `${scenario}.js`), 'utf8');
  const manifests = k6OperatorManifests(scenario!, script, { parallelism, baseUrl: values['base-url']!, ...(values['sandbox-url'] ? { sandboxUrl: values['sandbox-url'] } : {}) });
  const out = resolve(values.out ?? join('reports/load/k8s', scenario!));
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'configmap.yaml'), manifests.configMap);
  writeFileSync(join(out, 'testrun.yaml'), manifests.testRun);
  console.log(`Wrote ${join(out, 'configmap.yaml')} and ${join(out, 'testrun.yaml')} (parallelism ${parallelism}).`);
  return 0;
}
