import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { CommandLineError, parseCommandLine, type OptionSpecs } from '../../core/command-line.ts';
import { helpText } from '../../core/command-help.ts';
import { matching, oneOf, wholeNumber } from '../../core/option-values.ts';
import { PROFILES } from '../../core/profiles.ts';
import { replayFailure, runCampaign, type CampaignOptions, type CampaignResult, type ShrunkFailure, type Tally } from './campaign.ts';
import { PROPERTIES, type Property } from './properties.ts';

/** The options of `npm run fuzz`, each declared once (core/command-line.ts). */
export const FUZZ_OPTIONS = {
  requests: {
    type: 'string',
    value: '<n>',
    default: '100000',
    describe: 'generated requests, at least',
    parse: wholeNumber(1, 100_000_000, 100_000),
  },
  seed: {
    type: 'string',
    value: '<n>',
    default: 'random, printed',
    describe: 'fast-check seed',
    parse: wholeNumber(-(2 ** 31), 2 ** 31 - 1, 42),
  },
  'episode-length': {
    type: 'string',
    value: '<n>',
    default: '400',
    describe: 'most requests per episode; each episode has a sandbox of its own',
    parse: wholeNumber(1, 100_000, 400),
  },
  profile: {
    type: 'string',
    value: '<name>',
    default: 'both',
    describe: `${PROFILES.map((p) => `\`${p}\``).join(', ')} or \`both\``,
    parse: oneOf([...PROFILES, 'both']),
  },
  http: { type: 'boolean', describe: 'send over HTTP on 127.0.0.1 instead of `fastify.inject`' },
  strict: {
    type: 'boolean',
    describe:
      'fuzz sandboxes with the strict readings on (MOMO_SANDBOX_STRICT), judged by the document they serve then; without it, the default sandbox and its more accepting document',
  },
  shrink: {
    type: 'string',
    value: '<n>',
    default: '3',
    describe: 'failing episodes to shrink and show in full',
    parse: wholeNumber(0, 100, 3),
  },
  'shrink-time': {
    type: 'string',
    value: '<s>',
    default: '60',
    describe: 'time limit of one shrink, in seconds',
    parse: wholeNumber(1, 3600, 60),
  },
  path: {
    type: 'string',
    value: '<path>',
    describe: 'with --seed: replay one failing episode (the path the summary printed) and shrink it',
    parse: matching(/^\d+(:\d+)*$/, 'a fast-check path such as 12:0:3', '12:0:3'),
  },
  report: { type: 'string', value: '<file>', default: 'reports/fuzz/summary.json', describe: 'the summary as JSON' },
  help: { type: 'boolean', short: 'h', describe: 'the usage text' },
} as const satisfies OptionSpecs;

const USAGE = helpText({
  usage: 'npm run fuzz -- [options]',
  about: `Generates requests from the OpenAPI document the reference sandbox serves (GET /openapi.json), valid and
malformed, sends them to fresh in-process sandboxes and checks every answer: a documented status, no
undocumented 5xx, a body that matches its schema, no unexpected error, no state changed by a rejected
request or by a GET. See docs/fuzzing.md.`,
  options: FUZZ_OPTIONS,
  after: 'Exit codes: 0 no property was broken, 1 a property was broken, 2 the run could not test.',
});

class UsageError extends Error {}

function optionsFrom(argv: string[]): CampaignOptions & { path?: string; report: string; help: boolean } {
  let parsed;
  try {
    parsed = parseCommandLine(argv, FUZZ_OPTIONS);
  } catch (error) {
    if (!(error instanceof CommandLineError)) throw error;
    throw new UsageError(`${error.message} (--help lists the options)`);
  }
  const { values } = parsed;
  if (values.path !== undefined && values.seed === undefined)
    throw new UsageError("--path replays one episode of a run, and needs that run's --seed too");
  const profile = values.profile ?? 'both';
  return {
    help: values.help === true,
    requests: values.requests ?? 100_000,
    seed: values.seed ?? Math.floor(Math.random() * 2 ** 31),
    episodeLength: values['episode-length'] ?? 400,
    profiles: profile === 'both' ? PROFILES : [profile],
    strict: values.strict === true,
    transport: values.http ? 'http' : 'inject',
    shrink: values.shrink ?? 3,
    shrinkTimeMs: (values['shrink-time'] ?? 60) * 1000,
    ...(values.path !== undefined ? { path: values.path } : {}),
    report: resolve(values.report ?? 'reports/fuzz/summary.json'),
  };
}

const number = (n: number) => n.toLocaleString('en-US');

function statusList(statuses: Record<string, number>): string {
  return Object.entries(statuses)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([status, count]) => `${status}×${number(count)}`)
    .join(' ');
}

function table(title: string, rows: [string, Tally][]): string[] {
  const width = Math.max(title.length, ...rows.map(([name]) => name.length));
  return [
    `  ${title.padEnd(width)}  ${'requests'.padStart(9)}  ${'valid'.padStart(8)}  ${'malformed'.padStart(9)}  statuses`,
    ...rows.map(
      ([name, t]) =>
        `  ${name.padEnd(width)}  ${number(t.requests).padStart(9)}  ${number(t.valid).padStart(8)}  ${number(t.malformed).padStart(9)}  ${statusList(t.statuses)}`,
    ),
  ];
}

function failureLines(failure: ShrunkFailure): string[] {
  return [
    `  replay: npm run fuzz -- --seed ${failure.replay.seed} --path ${failure.replay.path}   (shrunk to ${failure.requestsInEpisode} request${failure.requestsInEpisode === 1 ? '' : 's'})`,
    ...failure.violations.map((v) => `    ${v.property}: ${v.detail}`),
    `    request: ${failure.request.method} ${failure.request.url}`,
    `      headers: ${JSON.stringify(failure.request.headers)}`,
    ...(failure.request.body ? [`      body: ${failure.request.body}`] : []),
    `    answer: ${failure.answer.status} ${failure.answer.body}`,
  ];
}

export function summaryLines(result: CampaignResult): string[] {
  const seconds = result.durationMs / 1000;
  const broken = Object.values(result.violationCounts).reduce<number>((a, b) => a + (b ?? 0), 0);
  const lines = [
    '',
    `Requests: ${number(result.requests)} (valid ${number(result.valid)}, malformed ${number(result.malformed)}) in ${number(result.episodes)} episodes, ${seconds.toFixed(1)} s, ${number(Math.round(result.requests / Math.max(seconds, 0.001)))} requests/s`,
    `  plus ${number(result.setupRequests)} requests that provisioned the fuzzer's API users${result.unsendable ? `; ${number(result.unsendable)} the HTTP client would not send` : ''}; ${number(result.callbacksReceived)} callbacks received`,
    `Seed ${result.seed}, ${result.transport === 'inject' ? 'in-process (fastify.inject)' : 'HTTP on 127.0.0.1'}, profiles ${result.profiles.join(', ')}`,
    `Statuses: ${statusList(result.statuses)}`,
    '',
    ...table(
      'operation',
      Object.entries(result.byOperation).sort(([a], [b]) => a.localeCompare(b)),
    ),
    '',
    ...table(
      'mutation',
      Object.entries(result.byMutation).sort(([, a], [, b]) => b.requests - a.requests),
    ),
  ];
  const refused = Object.entries(result.validRefused);
  if (refused.length > 0) {
    lines.push('', 'Valid requests (by the document) refused for their form, where the sandbox is stricter than the document says:');
    for (const [op, r] of refused) lines.push(`  ${op}: ${number(r.count)}, e.g. ${r.example}`);
  }
  lines.push('', 'Properties:');
  for (const [property, meaning] of Object.entries(PROPERTIES))
    lines.push(`  ${String(result.violationCounts[property as Property] ?? 0).padStart(7)}  ${property}: ${meaning}`);
  if (broken > 0) {
    lines.push('', `Violations (the first ${3} of each property and operation):`);
    for (const v of result.violations)
      lines.push(
        `  ${v.property} · ${v.operation} · ${v.mutation} · ${v.status}: ${v.detail}`,
        `    replay: npm run fuzz -- --seed ${v.replay.seed} --path ${v.replay.path}`,
      );
    if (result.failures.length > 0) lines.push('', 'Shrunk failures:');
    for (const failure of result.failures) lines.push(...failureLines(failure));
  }
  lines.push('', broken === 0 ? `No property was broken in ${number(result.requests)} requests.` : `${number(broken)} violations.`);
  return lines;
}

export async function main(argv: string[], log: (line: string) => void): Promise<number> {
  let options;
  try {
    options = optionsFrom(argv);
  } catch (error) {
    if (error instanceof UsageError) {
      log(error.message);
      return 2;
    }
    throw error;
  }
  if (options.help) {
    log(USAGE);
    return 0;
  }
  try {
    if (options.path !== undefined) {
      log(`Replaying seed ${options.seed}, path ${options.path} …`);
      const failure = await replayFailure({ ...options, path: options.path });
      if (!failure) {
        log('That episode breaks no property (any more).');
        return 0;
      }
      for (const line of failureLines(failure)) log(line);
      return 1;
    }
    log(
      `Fuzzing the reference sandbox: ${number(options.requests)} requests, seed ${options.seed}, episodes of up to ${options.episodeLength}, profiles ${options.profiles.join(', ')}, ${options.transport === 'inject' ? 'in-process' : 'over HTTP'}`,
    );
    const result = await runCampaign({
      ...options,
      onProgress: (p) =>
        log(
          `  ${number(p.requests)} / ${number(p.target)} requests · ${number(Math.round(p.requests / (p.elapsedMs / 1000)))}/s · ${p.violations} violations`,
        ),
    });
    for (const line of summaryLines(result)) log(line);
    mkdirSync(dirname(options.report), { recursive: true });
    writeFileSync(options.report, `${JSON.stringify(result, null, 2)}\n`);
    log(`Summary: ${options.report}`);
    return Object.keys(result.violationCounts).length === 0 ? 0 : 1;
  } catch (error) {
    log(`The fuzz run could not test: ${(error as Error).message}`);
    return 2;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2), (line) => console.log(line)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(`The fuzz run stopped on an unexpected error: ${(error as Error).stack ?? String(error)}`);
      process.exit(2);
    },
  );
}
