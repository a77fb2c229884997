import type { ProfileName } from '../../core/profiles.ts';
import { reportSafe } from '../../core/report-text.ts';
import type { Principal } from './observed.ts';
import type { ChaosRecord, ClientRecord, Coping, Recorder } from './recorder.ts';
import type { ReportedExchange } from './redaction.ts';
import { RULES, type Rule, type RuleSource, type Severity, type Stake } from './rules.ts';

/**
 * The client report as a document: what client-report.json holds (schemas/client-report.schema.json), and what
 * the HTML page and the JUnit file are rendered from.
 */
export interface ClientReportDocument {
  generatedAt: string;
  sandbox: { profile: ProfileName; strict: boolean };
  /** Every rule the clients were held to, with its source. */
  rules: ReportedRule[];
  clients: ReportedClient[];
  /** Requests and callbacks of clients beyond the number the report keeps, counted and not judged. */
  omittedEvents: number;
}

export interface ReportedRule {
  id: string;
  name: string;
  severity: Severity;
  stake?: Stake;
  source: RuleSource;
  fix: string;
}

export interface ReportedClient {
  id: string;
  kind: Principal['kind'];
  label: string;
  product?: string;
  firstSeen: string;
  requests: number;
  callbacks: number;
  findings: ReportedFinding[];
  chaos: ReportedChaos[];
  omitted: { findings: number; chaosConditions: number };
}

export interface ReportedFinding extends Omit<ReportedRule, 'id'> {
  /** The rule's id. */
  rule: string;
  count: number;
  /** What the client did, the first time. */
  detail: string;
  firstSeen: string;
  firstExchange: ReportedExchange;
}

/** One chaos condition applied to a client, and how it went on after each time. */
export interface ReportedChaos {
  condition: string;
  applied: number;
  coping: { outcome: Coping; count: number }[];
  /** The first time, in the chaos plugin's words. */
  first: { at: string; detail: string; operation?: string; referenceId?: string; coping: Coping };
}

const iso = (ms: number) => new Date(ms).toISOString();
const withoutId = ({ id: _id, ...rest }: ReportedRule) => rest;

export function reportedRule(rule: Rule): ReportedRule {
  return {
    id: rule.id,
    name: rule.title,
    severity: rule.severity,
    ...(rule.stake ? { stake: rule.stake } : {}),
    source: rule.source,
    fix: rule.fix,
  };
}

/** Findings that put money or security at stake first, then violations, then practices; in the rules' order within each. */
export function findingOrder(a: { severity: Severity; stake?: Stake; rule: string }, b: typeof a): number {
  const weight = (f: typeof a) => (f.stake === 'money' ? 0 : f.stake === 'security' ? 1 : f.severity === 'violation' ? 2 : 3);
  const place = (f: typeof a) => RULES.findIndex((rule) => rule.id === f.rule);
  return weight(a) - weight(b) || place(a) - place(b);
}

export function buildDocument(recorder: Recorder, sandbox: ClientReportDocument['sandbox'], now: number): ClientReportDocument {
  const clients = [...recorder.clients.values()].sort((a, b) => a.firstSeen - b.firstSeen || a.principal.id.localeCompare(b.principal.id));
  return {
    generatedAt: iso(now),
    sandbox,
    rules: RULES.map(reportedRule),
    clients: clients.map(reportedClient),
    omittedEvents: recorder.omittedEvents,
  };
}

function reportedClient(client: ClientRecord): ReportedClient {
  const { principal } = client;
  return {
    id: principal.id,
    kind: principal.kind,
    label: principal.label,
    ...(principal.product ? { product: principal.product } : {}),
    firstSeen: iso(client.firstSeen),
    requests: client.requests,
    callbacks: client.callbacks,
    findings: [...client.findings.values()]
      .map(
        (f): ReportedFinding => ({
          rule: f.rule.id,
          ...withoutId(reportedRule(f.rule)),
          count: f.count,
          detail: f.detail,
          firstSeen: iso(f.firstAt),
          firstExchange: f.firstExchange,
        }),
      )
      .sort((a, b) => findingOrder(a, b) || a.firstSeen.localeCompare(b.firstSeen)),
    chaos: chaosByCondition(client.chaos),
    omitted: { findings: client.omittedFindings, chaosConditions: client.omittedChaos },
  };
}

/** The chaos plugin's own words, made safe for a report and kept short. */
const chaosText = (text: string) => reportSafe(text.length > 200 ? `${text.slice(0, 200)}…` : text);

function chaosByCondition(records: readonly ChaosRecord[]): ReportedChaos[] {
  const byCondition = new Map<string, ChaosRecord[]>();
  for (const record of records) byCondition.set(record.applied.condition, [...(byCondition.get(record.applied.condition) ?? []), record]);
  return [...byCondition].map(([condition, applied]) => {
    const counts = new Map<Coping, number>();
    for (const record of applied) counts.set(record.coping, (counts.get(record.coping) ?? 0) + 1);
    const first = applied[0]!;
    return {
      condition: chaosText(condition),
      applied: applied.length,
      coping: [...counts].map(([outcome, count]) => ({ outcome, count })),
      first: {
        at: iso(first.applied.at),
        detail: chaosText(first.applied.detail),
        ...(first.applied.operationId ? { operation: first.applied.operationId } : {}),
        ...(first.applied.referenceId ? { referenceId: chaosText(first.applied.referenceId) } : {}),
        coping: first.coping,
      },
    };
  });
}
