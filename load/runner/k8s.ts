import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CommandLineError, InvalidOptionValue, nearestWords, parseCommandLine, type OptionSpecs } from '../../core/command-line.ts';
import { helpText } from '../../core/command-help.ts';
import { httpUrl, matching, numberAsWritten, wholeNumber } from '../../core/option-values.ts';
import { PACKAGE_ROOT } from '../../core/package.ts';
import { PRODUCTS } from '../../core/products.ts';
import { BUNDLE_DIR, buildLoadScripts, scenarioNames } from '../build.ts';
import { mixText, parseMix } from '../lib/mixes.ts';

/**
 * The k6-operator manifests of a load scenario (checked against the TestRun CRD of k6-operator v1.6.0, kept in
 * test/load/k6-operator/ with its source). What the operator does with them, as its v1.6.0 source shows:
 * - it starts `parallelism` runner pods, each `k6 run` on one execution segment of the same script;
 * - each runner runs its own setup() (the operator runs setup() once and shares its data only for Grafana Cloud
 *   private-load-zone runs), so each pod provisions its own API users and fetches its own tokens;
 * - without `runner.image` it pulls grafana/k6:latest, so the image is always written here;
 * - `cleanup: post` deletes the TestRun, its jobs and pods once it finishes; `separate` puts one runner per node.
 * Each pod judges its thresholds over its own share; the run's global figures come from an output that gathers
 * every pod's samples, here Prometheus remote write with trends as native histograms.
 */

/** The largest ConfigMap the API server stores: its data may hold 1 MiB. */
export const CONFIGMAP_LIMIT_BYTES = 1024 * 1024;

/** A Kubernetes resource quantity (the CRD's own pattern for runner.resources). */
const QUANTITY = /^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/;

export interface ManifestOptions {
  parallelism: number;
  baseUrl: string;
  sandboxUrl?: string;
  /** LOAD_* settings for every runner (the mix, the rate, …). */
  env?: Record<string, string>;
  /** The runner image, e.g. grafana/k6:1.8.1. */
  image: string;
  /** CPU and memory each runner pod requests, and is limited to (requests = limits: a generator that is throttled measures itself). */
  resources?: { cpu?: string; memory?: string };
  /** One runner pod per node. */
  separate?: boolean;
  /** Delete the TestRun, its jobs and pods once it has finished. */
  cleanup?: boolean;
  /** A Prometheus remote-write endpoint that every runner sends its samples to, trends as native histograms. */
  prometheusRemoteWrite?: string;
}

export interface Manifests {
  configMap: string;
  testRun: string;
}

/** A string as YAML: JSON's double-quoted strings are YAML's too. */
const q = (text: string) => JSON.stringify(text);

/** The two manifests for a scenario; `script` is the bundle's text, held by the ConfigMap byte for byte. */
export function k6OperatorManifests(scenario: string, script: string, options: ManifestOptions): Manifests {
  const name = `momo-load-${scenario}`;
  const file = `${scenario}.js`;
  // A literal block holds any printable text as it is; a carriage return or another control character it would not.
  if (/[\r\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufeff]/.test(script))
    throw new Error(`the ${scenario} bundle holds a control character, which a YAML literal block cannot keep`);
  const indented = script
    .split('\n')
    .map((line) => (line ? `    ${line}` : ''))
    .join('\n');
  const configMap = [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    `  name: ${name}`,
    '  labels:',
    '    app.kubernetes.io/part-of: momo-conformance-harness',
    'data:',
    // Literal block, kept: the bundle's trailing newline stays, and the text is the bundle's to the byte.
    // The indentation is given (2 past the key's), so a first line that starts with spaces is read right.
    `  ${file}: |2${script.endsWith('\n') ? '' : '-'}`,
    indented,
    '',
  ].join('\n');
  const plain: Record<string, string> = {
    MOMO_BASE_URL: options.baseUrl,
    MOMO_SANDBOX_URL: options.sandboxUrl ?? options.baseUrl,
    ...options.env,
    ...(options.prometheusRemoteWrite
      ? {
          K6_PROMETHEUS_RW_SERVER_URL: options.prometheusRemoteWrite,
          // Histograms, not a few pre-computed percentiles per pod: percentiles of histograms summed over the pods are the run's own.
          K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM: 'true',
        }
      : {}),
  };
  const envLines = [
    ...Object.entries(plain).flatMap(([k, v]) => [`        - name: ${k}`, `          value: ${q(v)}`]),
    ...PRODUCTS.flatMap((p) => [
      `        - name: MOMO_${p.toUpperCase()}_KEY`,
      '          valueFrom:',
      '            secretKeyRef:',
      '              name: momo-keys',
      `              key: ${p}`,
    ]),
  ];
  const { cpu, memory } = options.resources ?? {};
  const quantities = [...(cpu ? [`          cpu: ${q(cpu)}`] : []), ...(memory ? [`          memory: ${q(memory)}`] : [])];
  const testRun = [
    'apiVersion: k6.io/v1alpha1',
    'kind: TestRun',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    // The operator gives each of the runners one execution segment of the same script.
    `  parallelism: ${options.parallelism}`,
    ...(options.separate ? ['  separate: true'] : []),
    ...(options.cleanup ? ['  cleanup: post'] : []),
    '  script:',
    '    configMap:',
    `      name: ${name}`,
    `      file: ${file}`,
    `  arguments: ${q(`--no-usage-report --tag testid=${name}${options.prometheusRemoteWrite ? ' --out experimental-prometheus-rw' : ''}`)}`,
    '  runner:',
    `    image: ${q(options.image)}`,
    ...(quantities.length > 0
      ? ['    resources:', '      requests:', ...quantities.map((l) => l.slice(2)), '      limits:', ...quantities.map((l) => l.slice(2))]
      : []),
    '    env:',
    ...envLines,
    '',
  ].join('\n');
  return { configMap, testRun };
}

/** The LOAD_* settings a bundle reads: the names its code mentions (load/lib/config.ts reads each through __ENV). */
export function settingsReadBy(script: string): string[] {
  const code = script.split('//# sourceMappingURL=')[0]!;
  return [...new Set(code.match(/\bLOAD_[A-Z0-9_]+\b/g) ?? [])].sort();
}

/** The k6 image of the k6 the project builds and runs (scripts/ensure-k6.sh), e.g. grafana/k6:1.8.1. */
export function projectK6Image(): string | undefined {
  const k6 = spawnSync('bash', [join(PACKAGE_ROOT, 'scripts/ensure-k6.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (k6.status !== 0) return undefined;
  const version = /^k6 v(\d+\.\d+\.\d+)/m.exec(spawnSync(k6.stdout.trim(), ['version'], { encoding: 'utf8' }).stdout)?.[1];
  return version ? `grafana/k6:${version}` : undefined;
}

export function applyInstructions(out: string, name: string): string {
  return `Apply them (the ConfigMap is too large for a client-side kubectl apply, whose last-applied annotation holds at most
262,144 bytes: kubernetes/kubectl#712; server-side apply keeps no such annotation):
  kubectl create secret generic momo-keys --from-literal=collection=... --from-literal=disbursement=... --from-literal=remittance=...
  kubectl apply --server-side -f ${out}/configmap.yaml
  kubectl create -f ${out}/testrun.yaml         # a TestRun runs once: kubectl delete testrun ${name} before running it again
  kubectl get testrun ${name} -w                 # until its stage is finished`;
}

/** `--mix requestToPay:3,deposit:1`: the mix as the capacity scenario reads it in LOAD_MIX. */
function parseMixOption(raw: string): string {
  try {
    return mixText(parseMix(raw));
  } catch (error) {
    throw new InvalidOptionValue(`a mix: ${(error as Error).message}`, 'request-to-pay');
  }
}

/** The options of `momo-harness load-k8s`, each declared once (core/command-line.ts). */
export const K8S_OPTIONS = {
  parallelism: {
    type: 'string',
    value: '<n>',
    describe: 'runner pods, each one execution segment of the load (1 to 1000)',
    parse: wholeNumber(1, 1000, 4),
  },
  'base-url': {
    type: 'string',
    value: '<url>',
    describe: 'the http(s) URL the runner pods reach the target at',
    parse: httpUrl('http://momo:8080'),
  },
  'sandbox-url': {
    type: 'string',
    value: '<url>',
    describe: 'where they provision API users, if not at --base-url',
    parse: httpUrl('http://momo-sandbox:8080'),
  },
  rate: { type: 'string', value: '<per second>', env: 'LOAD_RATE', describe: 'arrival rate of every runner', parse: numberAsWritten(50) },
  duration: { type: 'string', value: '<s>', env: 'LOAD_DURATION_SECONDS', describe: 'how long the load lasts', parse: numberAsWritten(30) },
  iterations: {
    type: 'string',
    value: '<n>',
    env: 'LOAD_ITERATIONS',
    describe: 'iterations of the smoke scenario',
    parse: numberAsWritten(10),
  },
  vus: { type: 'string', value: '<n>', env: 'LOAD_VUS', describe: 'VUs allocated up front', parse: numberAsWritten(20) },
  'max-vus': {
    type: 'string',
    value: '<n>',
    env: 'LOAD_MAX_VUS',
    describe: 'the most VUs an open model may start',
    parse: numberAsWritten(200),
  },
  mix: {
    type: 'string',
    value: '<mix>',
    env: 'LOAD_MIX',
    describe: 'the operation mix of the capacity scenario (a mix name or `op:share,...`)',
    parse: parseMixOption,
  },
  env: {
    type: 'string',
    multiple: true,
    value: '<name=value>',
    describe:
      'any other `LOAD_*` setting the scenario reads, repeatable; every `LOAD_*` variable of the environment it reads is passed too (the options win), and a name it does not read is refused',
  },
  image: {
    type: 'string',
    value: '<image>',
    default: '`grafana/k6` at the version of the k6 the project builds',
    describe: "the runner image (`scripts/ensure-k6.sh`; the operator's own default is an unpinned `grafana/k6:latest`)",
  },
  cpu: {
    type: 'string',
    value: '<quantity>',
    describe: 'the CPU each runner requests and is limited to, e.g. `2` or `1500m`',
    parse: matching(QUANTITY, 'a Kubernetes quantity such as 2 or 1500m', '2'),
  },
  memory: {
    type: 'string',
    value: '<quantity>',
    describe: 'the memory each runner requests and is limited to, e.g. `2Gi`',
    parse: matching(QUANTITY, 'a Kubernetes quantity such as 2Gi or 512Mi', '2Gi'),
  },
  separate: { type: 'boolean', describe: 'one runner pod per node' },
  cleanup: { type: 'boolean', describe: 'delete the TestRun, its jobs and pods once it has finished (`cleanup: post`)' },
  'prometheus-rw': {
    type: 'string',
    value: '<url>',
    describe:
      "every runner sends its samples to this Prometheus remote-write endpoint, trends as native histograms: the run's global percentiles (docs/capacity.md#on-kubernetes-k6-operator)",
    parse: httpUrl('http://prometheus:9090/api/v1/write'),
  },
  out: { type: 'string', value: '<dir>', default: 'reports/load/k8s/<scenario>', describe: 'where the manifests go' },
  help: { type: 'boolean', describe: 'the usage text' },
} as const satisfies OptionSpecs;

const USAGE = helpText({
  usage: 'momo-harness load-k8s <scenario> --parallelism <n> --base-url <url> [options]',
  about: `Writes the k6-operator manifests that run a load scenario on Kubernetes, split over <n> runner pods with
execution segments: a ConfigMap holding the bundled script and a TestRun (reports/load/k8s/<scenario>/, or --out).
The subscription keys are read from a Secret named momo-keys (keys: collection, disbursement, remittance), never
written to a manifest. Each runner pod runs its own setup(): it provisions its own API users and fetches its own tokens.`,
  options: K8S_OPTIONS,
  after: 'Exit codes: 0 written, 2 the options are wrong.',
});

/** The options that stand for a LOAD_* setting. */
const SETTING_OPTIONS = {
  rate: 'LOAD_RATE',
  duration: 'LOAD_DURATION_SECONDS',
  iterations: 'LOAD_ITERATIONS',
  vus: 'LOAD_VUS',
  'max-vus': 'LOAD_MAX_VUS',
  mix: 'LOAD_MIX',
} as const;

/** The command stops, saying what to fix: exit 2. */
class K8sUsageError extends Error {}

type K8sArguments = ReturnType<typeof parseCommandLine<typeof K8S_OPTIONS>>['values'];

export async function main(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
  log: (line: string) => void = console.log,
  fail: (line: string) => void = console.error,
): Promise<number> {
  try {
    const parsed = parseCommandLine(argv, K8S_OPTIONS, { positionals: true, env });
    const { values, positionals } = parsed;
    if (values.help) {
      log(USAGE);
      return 0;
    }
    const scenario = checkedArguments(values, positionals);
    await buildLoadScripts();
    const script = readFileSync(join(BUNDLE_DIR, `${scenario}.js`), 'utf8');
    const settings = settingsFor(scenario, settingsReadBy(script), values, env);
    const image = values.image ?? projectK6Image();
    if (!image)
      throw new K8sUsageError(
        'No k6 could be had to pin the runner image to (scripts/ensure-k6.sh, above): give the image with --image, e.g. --image grafana/k6:1.8.1.',
      );
    const bytes = Buffer.byteLength(script);
    if (bytes > CONFIGMAP_LIMIT_BYTES)
      throw new K8sUsageError(
        `The ${scenario} bundle is ${bytes.toLocaleString('en')} bytes, more than the ${CONFIGMAP_LIMIT_BYTES.toLocaleString('en')} a ConfigMap may hold: give the runners the script from a volume (spec.script.volumeClaim) instead.`,
      );
    const out = writeManifests(scenario, script, { values, settings, image });
    const parallelism = values.parallelism!;
    const given = Object.entries(settings).map(([k, v]) => `${k}=${v}`);
    log(
      `Wrote ${join(out, 'configmap.yaml')} (${bytes.toLocaleString('en')} bytes of script) and ${join(out, 'testrun.yaml')}: ${parallelism} runner pod${parallelism === 1 ? '' : 's'} of ${image}${given.length > 0 ? `, with ${given.join(' ')}` : ''}.`,
    );
    log(applyInstructions(out, `momo-load-${scenario}`));
    return 0;
  } catch (error) {
    if (error instanceof CommandLineError) fail(`${error.message}\n\n${USAGE}`);
    else if (error instanceof K8sUsageError) fail(error.message);
    else throw error;
    return 2;
  }
}

/** The scenario, once the options that must be given are; every problem is said at once (their values are parsed already). */
function checkedArguments(values: K8sArguments, positionals: string[]): string {
  const scenario = positionals[0];
  const problems: string[] = [];
  if (!scenario || positionals.length > 1 || !scenarioNames().includes(scenario))
    problems.push(`name one scenario: ${scenarioNames().join(', ')}`);
  if (values.parallelism === undefined) problems.push('give the runner pods with --parallelism <n>, from 1 to 1000');
  if (values['base-url'] === undefined) problems.push('give the http(s) URL the runner pods reach the target at with --base-url <url>');
  if (problems.length > 0) throw new K8sUsageError(`${problems.join('; ')}.\n\n${USAGE}`);
  return scenario!;
}

/** The LOAD_* settings the scenario reads: from the environment, then --env, then the options that stand for one. */
function settingsFor(
  scenario: string,
  reads: string[],
  values: K8sArguments,
  env: Record<string, string | undefined>,
): Record<string, string> {
  const settings: Record<string, string> = Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && reads.includes(e[0])),
  );
  for (const item of values.env ?? []) {
    const [setting, ...rest] = item.split('=');
    if (!setting || rest.length === 0 || !reads.includes(setting)) {
      const meant = setting ? nearestWords(setting, reads) : [];
      throw new K8sUsageError(
        `--env ${JSON.stringify(item)}: write LOAD_<NAME>=value, with a name among the settings the ${scenario} scenario reads (${reads.join(', ')})${meant.length > 0 ? `; did you mean ${meant.join(' or ')}?` : ''}.`,
      );
    }
    settings[setting] = rest.join('=');
  }
  for (const [flag, setting] of Object.entries(SETTING_OPTIONS)) {
    const value = values[flag as keyof typeof SETTING_OPTIONS];
    if (value === undefined) continue;
    if (!reads.includes(setting))
      throw new K8sUsageError(`--${flag}: the ${scenario} scenario does not read ${setting}; it reads ${reads.join(', ')}.`);
    settings[setting] = value;
  }
  return settings;
}

/** configmap.yaml and testrun.yaml in the output folder, which is returned. */
function writeManifests(
  scenario: string,
  script: string,
  { values, settings, image }: { values: K8sArguments; settings: Record<string, string>; image: string },
): string {
  const manifests = k6OperatorManifests(scenario, script, {
    parallelism: values.parallelism!,
    baseUrl: values['base-url']!,
    image,
    env: settings,
    ...(values['sandbox-url'] ? { sandboxUrl: values['sandbox-url'] } : {}),
    resources: { ...(values.cpu ? { cpu: values.cpu } : {}), ...(values.memory ? { memory: values.memory } : {}) },
    separate: values.separate ?? false,
    cleanup: values.cleanup ?? false,
    ...(values['prometheus-rw'] ? { prometheusRemoteWrite: values['prometheus-rw'] } : {}),
  });
  const out = resolve(values.out ?? join('reports/load/k8s', scenario));
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'configmap.yaml'), manifests.configMap);
  writeFileSync(join(out, 'testrun.yaml'), manifests.testRun);
  return out;
}
