/**
 * The interop suite: every published npm client of the MoMo API, unchanged but for where it sends requests,
 * through each of its flows against the reference sandbox in both profiles, with the sandbox's client report on
 * (--client-report). A flow passes, or fails because of the client's own bug, which the client report finds (a
 * finding of one of its rules, with the exchange that shows it), or fails because of the sandbox: the last is
 * what the suite exists to catch. A third run, in the spec profile with the strict readings on (--strict), shows
 * what each client sends that only a strict reading refuses: information for the client's developers, not a
 * failure. Each run writes its client report to reports/interop/<client>/<setup>/.
 *
 *   npm run interop      runs it and writes docs/interop.md
 */
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PROFILES, type ProfileName } from '../../core/profiles.ts';
import { DEVELOPMENT_KEYS } from '../../sandbox/domain/settings.ts';
import { Redactor } from '../../core/secrets/redact.ts';
import { RULES } from '../../sandbox/client-report/rules.ts';
import { CLIENT_NOTES } from './client-notes.ts';
import type { ClientNote, FlowFinding, FlowResult } from './support/types.ts';

const run = promisify(execFile);
const HERE = fileURLToPath(new URL('.', import.meta.url));
const ROOT = join(HERE, '../..');
export const INTEROP_DOC = join(ROOT, 'docs/interop.md');
/** Where each run writes its results and its client report: <client>/<setup>/ below it. */
export const INTEROP_REPORTS = join(ROOT, 'reports/interop');

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

/** The folder of one client's run in one setup: its results and its client report. */
export function runFolder(client: string, { profile, strict }: Setup): string {
  return join(INTEROP_REPORTS, client, `${profile}${strict ? '-strict' : ''}`);
}

/** Runs one client in one setup in its own process (support/run-client.ts), bounded in time. */
export async function runClient(client: string, setup: Setup): Promise<FlowResult[]> {
  const folder = runFolder(client, setup);
  rmSync(folder, { recursive: true, force: true });
  try {
    await run(
      process.execPath,
      ['--import', 'tsx', join(HERE, 'support/run-client.ts'), client, setup.profile, folder, ...(setup.strict ? ['--strict'] : [])],
      { cwd: ROOT, timeout: 180_000, maxBuffer: 4 * 1024 * 1024 },
    );
    return JSON.parse(readFileSync(join(folder, 'results.json'), 'utf8')) as FlowResult[];
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(
      `${client} (${setupName(setup)}) could not be run: ${(stderr || (error as Error).message).trim().split('\n').slice(-3).join(' ')}`,
    );
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

/** A client's bug: a rule of the client report it broke, B1, B2… in the order of the clients and the rules. */
export interface ClientBug {
  ref: string;
  client: string;
  rule: string;
  /** The first finding of it, in the first setup that showed it. */
  finding: FlowFinding;
  note?: ClientNote;
}

export interface JudgedFlow extends FlowResult {
  verdict: Verdict;
  /** The client's bug that explains the failure. */
  bug?: ClientBug;
  /** Under --strict, the refusal that stopped a flow the default sandbox serves. */
  refusal?: FlowResult['exchanges'][number];
}

export interface Judgement {
  flows: JudgedFlow[];
  bugs: ClientBug[];
  /** Notes that explained nothing: their rule no run of their client finds. Each is a mistake in client-notes.ts. */
  stale: string[];
}

/**
 * The finding that makes a failed flow the client's own bug: a violation of a rule that names the mistake; or a
 * refusal of the sandbox (request-refused) that a note confirms, since the sandbox itself may be wrong there.
 */
function bugFinding(result: FlowResult, notes: readonly ClientNote[]): FlowFinding | undefined {
  const violations = result.findings.filter((f) => f.severity === 'violation');
  const noted = (f: FlowFinding) => notes.some((n) => n.client === result.client && n.rule === f.rule);
  return violations.find((f) => f.rule !== 'request-refused') ?? violations.find(noted);
}

/**
 * Each flow: it passes, or a finding of the client report explains its failure as the client's bug. Under
 * --strict, a flow refused where the default sandbox takes it (it passes there, or fails there later, for a
 * bug of the client's) is a strict reading at work.
 */
export function judge(results: readonly FlowResult[], notes: readonly ClientNote[] = CLIENT_NOTES): Judgement {
  const found = new Map<string, { client: string; rule: string; finding: FlowFinding }>();
  const verdicts = results.map((result): { verdict: Verdict; finding?: FlowFinding; refusal?: JudgedFlow['refusal'] } => {
    if (result.ok) return { verdict: 'passes' };
    const finding = bugFinding(result, notes);
    if (result.strict) {
      const refusal = result.exchanges.find((e) => e.status >= 400 && e.status < 500);
      const lenient = results.find(
        (r) => !r.strict && r.profile === result.profile && r.client === result.client && r.flow === result.flow,
      );
      // Refused where the default sandbox took the request: before the client's own bug, if it has one, could show.
      if (refusal && lenient && (lenient.ok || (!finding && bugFinding(lenient, notes)))) return { verdict: 'strict reading', refusal };
    }
    if (!finding) return { verdict: 'SANDBOX FAILS IT' };
    const key = `${result.client}\u0000${finding.rule}`;
    if (!found.has(key)) found.set(key, { client: result.client, rule: finding.rule, finding });
    return { verdict: 'client bug', finding };
  });
  const order = (client: string, rule: string) => [CLIENTS.indexOf(client as never), RULES.findIndex((r) => r.id === rule)];
  const bugs = [...found.values()]
    .sort((a, b) => {
      const [ca, ra] = order(a.client, a.rule);
      const [cb, rb] = order(b.client, b.rule);
      return ca! - cb! || ra! - rb! || a.client.localeCompare(b.client);
    })
    .map((bug, i): ClientBug => {
      const note = notes.find((n) => n.client === bug.client && n.rule === bug.rule);
      return { ref: `B${i + 1}`, ...bug, ...(note ? { note } : {}) };
    });
  const flows = results.map((result, i): JudgedFlow => {
    const { verdict, finding, refusal } = verdicts[i]!;
    const bug = finding && bugs.find((b) => b.client === result.client && b.rule === finding.rule);
    return { ...result, verdict, ...(bug ? { bug } : {}), ...(refusal ? { refusal } : {}) };
  });
  const ran = new Set(results.filter((r) => !r.strict).map((r) => r.client));
  const stale = notes
    .filter((note) => ran.has(note.client) && !bugs.some((b) => b.client === note.client && b.rule === note.rule))
    .map(
      (note) =>
        `${note.client} / ${note.rule}: a note explains this bug (${note.what.slice(0, 80)}…), but no run of the client broke the rule`,
    );
  return { flows, bugs, stale };
}

/** docs/interop.md: the table of flows by setup, each client bug with what the client report found, and what else it found. Deterministic, so it can be compared with the committed file. */
export function renderMarkdown({ flows, bugs }: Judgement): string {
  const redactor = new Redactor();
  for (const key of Object.values(DEVELOPMENT_KEYS)) redactor.add(key, 'subscription key');
  const shown = (text: string, max: number) => redactor.text(stableText(text)).slice(0, max);
  const strictRefusals: JudgedFlow[] = flows.filter((f) => f.verdict === 'strict reading');
  const cell = (flow: JudgedFlow | undefined) =>
    !flow
      ? '—'
      : flow.verdict === 'passes'
        ? 'passes'
        : flow.verdict === 'client bug'
          ? `client bug ${flow.bug!.ref}`
          : flow.verdict === 'strict reading'
            ? `refused: S${strictRefusals.indexOf(flow) + 1}`
            : `**${flow.verdict}**`;
  const rows = [...new Set(flows.map((f) => `${f.client}\u0000${f.flow}`))].map((key) => {
    const [client, flow] = key.split('\u0000') as [string, string];
    const of = (setup: Setup) =>
      flows.find((f) => f.client === client && f.flow === flow && f.profile === setup.profile && f.strict === setup.strict);
    return `| ${client} | ${flow} | ${SETUPS.map((s) => cell(of(s))).join(' | ')} |`;
  });
  const clients = [...new Set(flows.map((f) => f.client))];
  const byDefault = flows.filter((f) => !f.strict);
  const passing = (client: string) => byDefault.filter((f) => f.client === client && f.verdict === 'passes').length;
  const exchangeOf = (finding: FlowFinding) =>
    `\`${finding.exchange.method} ${stableText(finding.exchange.target)}\` answered ${finding.exchange.status ?? 'nothing (the connection closed)'}${finding.exchange.requestBody ? `, request body \`${shown(finding.exchange.requestBody, 200)}\`` : ''}${finding.exchange.responseBody ? `, response \`${shown(finding.exchange.responseBody, 300)}\`` : ''}`;
  // What the report found besides the bugs: in the default runs, by client and rule, with the flows it came in.
  const others = new Map<string, { client: string; finding: FlowFinding; flows: Set<string> }>();
  for (const flow of byDefault) {
    for (const finding of flow.findings) {
      if (bugs.some((b) => b.client === flow.client && b.rule === finding.rule)) continue;
      const key = `${flow.client}\u0000${finding.rule}`;
      const other = others.get(key) ?? { client: flow.client, finding, flows: new Set<string>() };
      other.flows.add(flow.flow);
      others.set(key, other);
    }
  }
  return [
    '# Published clients against the reference sandbox',
    '',
    'Generated by `npm run interop` (test/interop/interop.ts); `npm test` checks that this file is current. Each npm',
    'client of the MoMo API runs every flow it offers, unchanged but for where it sends requests, against the',
    "reference sandbox in both profiles, with the sandbox's [client report](sandbox.md#the-client-report-the-sandbox-certifies-the-client-too)",
    'on: each run writes one to `reports/interop/<client>/<profile>/`. A flow either passes or fails because of the',
    'client itself: each such bug is a rule of the client report that the client broke, listed below with the request',
    'that shows it. A flow the sandbox fails would be a sandbox defect, and fails the suite. The last column runs the',
    'spec profile with the strict readings on (`--strict`): what it refuses is listed under "What --strict refuses",',
    "for the client's developers to weigh.",
    '',
    `| Client | Flow | ${SETUPS.map(setupName).join(' | ')} |`,
    `|---|---|${SETUPS.map(() => '---').join('|')}|`,
    ...rows,
    '',
    `Without --strict: ${clients.map((c) => `${c} ${passing(c)} of ${byDefault.filter((f) => f.client === c).length}`).join('; ')} flow runs pass.`,
    '',
    "## The clients' own bugs",
    '',
    'Each is a finding of the client report, in the first run that showed it.',
    '',
    ...bugs.flatMap((bug) => [
      `### ${bug.ref} ${bug.client}: ${bug.rule}`,
      '',
      `- **Found by:** the rule \`${bug.rule}\`, ${bug.finding.name}: a ${bug.finding.severity} of ${bug.finding.source}`,
      `- **What the client did:** ${shown(bug.finding.detail, 300)}`,
      ...(bug.note ? [`- **Where in the client:** ${bug.note.what}`] : []),
      `- **The exchange:** ${exchangeOf(bug.finding)}`,
      `- **The flows it fails:** ${[...new Set(flows.filter((f) => f.bug === bug).map((f) => f.flow))].join('; ')}`,
      `- **Fix:** ${bug.finding.fix}`,
      ...(bug.note?.workaround ? [`- **Workaround:** ${bug.note.workaround}`] : []),
      '',
    ]),
    '## What else the client report found',
    '',
    others.size === 0
      ? 'Nothing: every other flow of the default runs kept every rule of the client report.'
      : 'In the default runs, besides the bugs above: each rule a client broke, and the flows it broke it in.',
    '',
    ...[...others.values()].map(
      ({ client, finding, flows: where }) =>
        `- **${client}** \`${finding.rule}\` (${finding.severity}${finding.stake ? `, ${finding.stake} at stake` : ''}): ${finding.name}. In: ${[...where].join('; ')}.`,
    ),
    ...(others.size === 0 ? [] : ['']),
    '## What --strict refuses',
    '',
    strictRefusals.length === 0
      ? 'Nothing: every flow the default sandbox serves passes under --strict too.'
      : "Each of these flows gets further against the default sandbox (it passes, or fails later for a bug of the client's own); a strict reading (npm run sandbox -- --list-differences) refuses it.",
    '',
    ...strictRefusals.map(
      (flow, i) =>
        `- **S${i + 1}** ${flow.client}: ${flow.flow}. \`${flow.refusal!.method} ${stableText(flow.refusal!.path)}\` answered ${flow.refusal!.status}: ${shown(flow.refusal!.responseBody, 300)}`,
    ),
    '',
  ].join('\n');
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
    `${judgement.flows.length} flow runs: ${counts('passes')} pass, ${counts('client bug')} fail for a client bug, ${counts('strict reading')} are refused only under --strict, ${failing.length} fail because of the sandbox. Wrote ${INTEROP_DOC}; each run's client report is under ${INTEROP_REPORTS}.`,
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
