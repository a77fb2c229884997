/**
 * The interop suite: every published npm client of the MoMo API, unchanged but for where it sends requests,
 * through each of its flows against the reference sandbox in both profiles. A flow passes, or fails because
 * of the client's own bug (known-bugs.ts, with the exchange that shows it), or fails because of the sandbox:
 * the last is what the suite exists to catch. A third run, in the spec profile with the strict readings on
 * (--strict), shows what each client sends that only a strict reading refuses: information for the client's
 * developers, not a failure.
 *
 *   npm run interop      runs it and writes docs/interop.md
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PROFILES, type ProfileName } from '../../core/profiles.ts';
import { DEVELOPMENT_KEYS } from '../../sandbox/domain/settings.ts';
import { Redactor } from '../../core/secrets/redact.ts';
import { KNOWN_BUGS } from './known-bugs.ts';
import type { ClientBug, FlowResult } from './support/types.ts';

const run = promisify(execFile);
const HERE = fileURLToPath(new URL('.', import.meta.url));
const ROOT = join(HERE, '../..');
export const INTEROP_DOC = join(ROOT, 'docs/interop.md');

/** The clients, by their npm names: each has an adapter in clients/<name>.ts. */
export const CLIENTS = ['mtn-momo', 'code-coast-momo-api', 'mtn-momo-api', 'mtn-momo-client', 'mtn-momo-sdk', 'momo-api'] as const;

/** One run of a client: a profile, with or without the strict readings. */
export interface Setup {
  profile: ProfileName;
  strict: boolean;
}

/** The runs of every client: both profiles as the sandbox serves by default, and the spec profile under --strict. */
export const SETUPS: readonly Setup[] = [...PROFILES.map((profile) => ({ profile, strict: false })), { profile: 'spec', strict: true }];

const setupName = ({ profile, strict }: Setup) => `${profile}${strict ? ', --strict' : ''}`;

/** Runs one client in one setup in its own process (support/run-client.ts), bounded in time. */
export async function runClient(client: string, { profile, strict }: Setup): Promise<FlowResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'momo-interop-'));
  const out = join(dir, 'results.json');
  try {
    await run(
      process.execPath,
      ['--import', 'tsx', join(HERE, 'support/run-client.ts'), client, profile, out, ...(strict ? ['--strict'] : [])],
      { cwd: ROOT, timeout: 180_000, maxBuffer: 4 * 1024 * 1024 },
    );
    return JSON.parse(readFileSync(out, 'utf8')) as FlowResult[];
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(
      `${client} (${setupName({ profile, strict })}) could not be run: ${(stderr || (error as Error).message).trim().split('\n').slice(-3).join(' ')}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every client in every setup, two processes at a time. */
export async function runAll(clients: readonly string[] = CLIENTS, setups: readonly Setup[] = SETUPS): Promise<FlowResult[]> {
  const jobs = clients.flatMap((client) => setups.map((setup) => ({ client, setup })));
  const results: FlowResult[][] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const index = next++;
      const { client, setup } = jobs[index]!;
      results[index] = await runClient(client, setup);
    }
  };
  await Promise.all([worker(), worker()]);
  return results.flat();
}

/** Under --strict a flow the default sandbox serves may be refused: 'strict reading', not a failure. */
export type Verdict = 'passes' | 'client bug' | 'strict reading' | 'SANDBOX FAILS IT';

export interface JudgedFlow extends FlowResult {
  verdict: Verdict;
  /** The client bug that explains the failure, with the exchange that shows it. */
  bug?: ClientBug & { exchange: FlowResult['exchanges'][number] };
  /** Under --strict, the refusal that stopped a flow the default sandbox serves. */
  refusal?: FlowResult['exchanges'][number];
}

export interface Judgement {
  flows: JudgedFlow[];
  /** Known bugs that explained no failure: a flow that now passes, or evidence no exchange shows. Each is a mistake in known-bugs.ts. */
  stale: string[];
}

/**
 * Each flow: it passes, or a known bug of its client explains its failure with an exchange it made. Under
 * --strict, a flow that fails with a 4xx the sandbox refused it with is a strict reading at work.
 */
export function judge(results: readonly FlowResult[], bugs: readonly ClientBug[] = KNOWN_BUGS): Judgement {
  const used = new Set<ClientBug>();
  const flows = results.map((result): JudgedFlow => {
    const candidates = bugs.filter(
      (b) => b.client === result.client && b.flow === result.flow && (!b.profiles || b.profiles.includes(result.profile)),
    );
    if (result.ok) return { ...result, verdict: 'passes' };
    if (result.strict) {
      const refusal = result.exchanges.find((e) => e.status >= 400 && e.status < 500);
      const lenient = results.find(
        (r) => !r.strict && r.profile === result.profile && r.client === result.client && r.flow === result.flow,
      );
      if (refusal && lenient?.ok) return { ...result, verdict: 'strict reading', refusal };
    }
    for (const bug of candidates) {
      const exchange = result.exchanges.find(
        (e) =>
          e.method === bug.evidence.method &&
          (!bug.evidence.path || bug.evidence.path.test(e.path)) &&
          (bug.evidence.status === undefined || e.status === bug.evidence.status),
      );
      if (exchange) {
        used.add(bug);
        return { ...result, verdict: 'client bug', bug: { ...bug, exchange } };
      }
    }
    return { ...result, verdict: 'SANDBOX FAILS IT' };
  });
  const ran = new Set(results.filter((r) => !r.strict).map((r) => `${r.client}\u0000${r.flow}\u0000${r.profile}`));
  const stale = bugs
    .filter((bug) => !used.has(bug) && (bug.profiles ?? PROFILES).some((p) => ran.has(`${bug.client}\u0000${bug.flow}\u0000${p}`)))
    .map((bug) => `${bug.client} / ${bug.flow}: listed as a client bug (${bug.what}), but no run of it failed with that evidence`);
  return { flows, stale };
}

/** docs/interop.md: the table of flows by profile, then each client bug with its evidence. Deterministic, so it can be compared with the committed file. */
export function renderMarkdown({ flows }: Judgement): string {
  const redactor = new Redactor();
  for (const key of Object.values(DEVELOPMENT_KEYS)) redactor.add(key, 'subscription key');
  const strictRefusals: JudgedFlow[] = flows.filter((f) => f.verdict === 'strict reading');
  const cell = (flow: JudgedFlow | undefined) =>
    !flow
      ? '—'
      : flow.verdict === 'passes'
        ? 'passes'
        : flow.verdict === 'client bug'
          ? `client bug ${bugRef(flow.bug!)}`
          : flow.verdict === 'strict reading'
            ? `refused: S${strictRefusals.indexOf(flow) + 1}`
            : `**${flow.verdict}**`;
  const rows = [...new Set(flows.map((f) => `${f.client}\u0000${f.flow}`))].map((key) => {
    const [client, flow] = key.split('\u0000') as [string, string];
    const of = (setup: Setup) =>
      flows.find((f) => f.client === client && f.flow === flow && f.profile === setup.profile && f.strict === setup.strict);
    return `| ${client} | ${flow} | ${SETUPS.map((s) => cell(of(s))).join(' | ')} |`;
  });
  const bugs = new Map<string, JudgedFlow['bug'] & {}>();
  for (const flow of flows) if (flow.bug) bugs.set(bugRef(flow.bug), flow.bug);
  const clients = [...new Set(flows.map((f) => f.client))];
  const byDefault = flows.filter((f) => !f.strict);
  const passing = (client: string) => byDefault.filter((f) => f.client === client && f.verdict === 'passes').length;
  return [
    '# Published clients against the reference sandbox',
    '',
    'Generated by `npm run interop` (test/interop/interop.ts); `npm test` checks that this file is current. Each npm',
    'client of the MoMo API runs every flow it offers, unchanged but for where it sends requests, against the',
    'reference sandbox in both profiles. A flow either passes or fails because of the client itself: each such bug is',
    'listed below with the request that shows it and what it contradicts. A flow the sandbox fails would be a sandbox',
    'defect, and fails the suite. The last column runs the spec profile with the strict readings on (`--strict`):',
    'what it refuses is listed under "What --strict refuses", for the client\'s developers to weigh.',
    '',
    `| Client | Flow | ${SETUPS.map(setupName).join(' | ')} |`,
    `|---|---|${SETUPS.map(() => '---').join('|')}|`,
    ...rows,
    '',
    `Without --strict: ${clients.map((c) => `${c} ${passing(c)} of ${byDefault.filter((f) => f.client === c).length}`).join('; ')} flow runs pass.`,
    '',
    "## The clients' own bugs",
    '',
    ...[...bugs.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .flatMap(([ref, bug]) => [
        `### ${ref} ${bug.client}: ${bug.flow}`,
        '',
        `- **What it does:** ${bug.what}`,
        `- **What that contradicts:** ${bug.contradicts}`,
        `- **The exchange:** \`${bug.exchange.method} ${stableText(bug.exchange.path)}\` answered ${bug.exchange.status}${bug.exchange.requestBody ? `, request body \`${redactor.text(stableText(bug.exchange.requestBody)).slice(0, 200)}\`` : ''}${bug.exchange.responseBody ? `, response \`${redactor.text(stableText(bug.exchange.responseBody)).slice(0, 300)}\`` : ''}`,
        ...(bug.workaround ? [`- **Workaround:** ${bug.workaround}`] : []),
        '',
      ]),
    '## What --strict refuses',
    '',
    strictRefusals.length === 0
      ? 'Nothing: every flow the default sandbox serves passes under --strict too.'
      : 'Each of these flows passes against the default sandbox; a strict reading (npm run sandbox -- --list-differences) refuses it.',
    '',
    ...strictRefusals.map(
      (flow, i) =>
        `- **S${i + 1}** ${flow.client}: ${flow.flow}. \`${flow.refusal!.method} ${stableText(flow.refusal!.path)}\` answered ${flow.refusal!.status}: ${redactor.text(stableText(flow.refusal!.responseBody)).slice(0, 300)}`,
    ),
    '',
  ].join('\n');
}

/** B1, B2…: a bug's place in KNOWN_BUGS, stable across runs. */
function bugRef(bug: ClientBug): string {
  return `B${KNOWN_BUGS.findIndex((b) => b.client === bug.client && b.flow === bug.flow && b.what === bug.what) + 1}`;
}

/** Text with what changes from run to run (UUIDs, ports, JWTs, 32-hex keys) replaced by placeholders. */
function stableText(text: string): string {
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '{uuid}')
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:{port}')
    .replace(/eyJ[\w-]+\.[\w-]+\.[\w-]+/g, '{jwt}')
    .replace(/\b[0-9a-f]{32}\b/g, '{key}')
    .replace(/order-[0-9a-f]{8}/g, 'order-{id}');
}

async function main(argv: string[]): Promise<number> {
  const check = argv.includes('--check');
  const judgement = judge(await runAll());
  const markdown = renderMarkdown(judgement);
  const failing = judgement.flows.filter((f) => f.verdict === 'SANDBOX FAILS IT');
  for (const f of failing) console.error(`SANDBOX FAILS ${f.client} / ${f.flow} (${f.profile}): ${f.error}`);
  for (const s of judgement.stale) console.error(`STALE: ${s}`);
  if (check) {
    const current = readFileSync(INTEROP_DOC, 'utf8');
    if (current !== markdown) console.error('docs/interop.md is not current: run npm run interop');
    return failing.length > 0 || judgement.stale.length > 0 || current !== markdown ? 1 : 0;
  }
  writeFileSync(INTEROP_DOC, markdown);
  const counts = (v: Verdict) => judgement.flows.filter((f) => f.verdict === v).length;
  console.log(
    `${judgement.flows.length} flow runs: ${counts('passes')} pass, ${counts('client bug')} fail for a client bug, ${counts('strict reading')} are refused only under --strict, ${failing.length} fail because of the sandbox. Wrote ${INTEROP_DOC}`,
  );
  return failing.length > 0 || judgement.stale.length > 0 ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: Error) => {
      console.error(error.message);
      process.exit(2);
    },
  );
}
