import { OPERATIONS } from '../../core/catalogue/operations.ts';
import type { TransactionStore } from '../../core/catalogue/operations.ts';
import type { ChaosApplied } from '../domain/chaos-applied.ts';
import { idKey } from '../domain/state.ts';
import { ClientMemory } from './memory.ts';
import type { ObservedCallback, ObservedChaos, ObservedExchange, Principal } from './observed.ts';
import { clip, type ReportedExchange, redactorOf, reportedCallback, reportedExchange } from './redaction.ts';
import { type ClientEvent, type Detection, RULES, type Rule } from './rules.ts';

/**
 * Keeps what each client did, as the rules judge it: for each client (an API user, or a subscription key
 * before provisioning) how often each finding came, the first exchange that showed it (redacted), and how the
 * client coped with each chaos condition applied to it. Everything is bounded: so many clients, so many
 * findings, one exchange a finding; past a bound, what is left out is counted.
 */

/** Clients kept; the requests of any further client are counted, not judged. */
export const MAX_CLIENTS = 1000;
/** Findings kept for one client, and for all together. */
export const MAX_FINDINGS_PER_CLIENT = 40;
export const MAX_FINDINGS = 4000;
/** Chaos conditions remembered for one client. */
export const MAX_CHAOS_PER_CLIENT = 64;

export interface FindingRecord {
  rule: Rule;
  variant?: string;
  count: number;
  /** The first detection's sentence, masked and made report-safe. */
  detail: string;
  firstAt: number;
  firstExchange: ReportedExchange;
}

/** How a client went on after a chaos condition, from the first of its later requests that concerns it. */
export type Coping =
  | 'retried with the same X-Reference-Id'
  | 'read the status'
  | 'made it again under a new X-Reference-Id'
  | 'sent the same request again'
  | 'went on with other requests'
  | 'nothing since';

export interface ChaosRecord {
  applied: ChaosApplied;
  coping: Coping;
  store?: TransactionStore;
  fingerprint?: string;
}

export interface ClientRecord {
  principal: Principal;
  firstSeen: number;
  requests: number;
  callbacks: number;
  memory: ClientMemory;
  findings: Map<string, FindingRecord>;
  chaos: ChaosRecord[];
  omittedFindings: number;
  omittedChaos: number;
}

export class Recorder {
  readonly clients = new Map<string, ClientRecord>();
  /** Requests and callbacks of clients past MAX_CLIENTS. */
  omittedEvents = 0;
  private findingsKept = 0;

  exchange(exchange: ObservedExchange): void {
    const client = this.clientOf(exchange.principal, exchange.at);
    if (!client) return;
    client.requests += 1;
    this.cope(client, exchange);
    this.judge(
      client,
      (explained) => ({ kind: 'exchange', exchange, explained }),
      exchange.at,
      () => reportedExchange(exchange),
      exchange.secrets,
    );
  }

  callback(callback: ObservedCallback): void {
    const client = this.clientOf(callback.principal, callback.at);
    if (!client) return;
    client.callbacks += 1;
    this.judge(
      client,
      () => ({ kind: 'callback', callback }),
      callback.at,
      () => reportedCallback(callback),
      callback.secrets,
    );
  }

  chaos(chaos: ObservedChaos): void {
    const client = this.clientOf(chaos.principal, chaos.applied.at);
    if (!client) return;
    if (client.chaos.length < MAX_CHAOS_PER_CLIENT) {
      client.chaos.push({ applied: chaos.applied, coping: 'nothing since', store: chaos.store, fingerprint: chaos.stored?.fingerprint });
    } else {
      client.omittedChaos += 1;
    }
    // No rule finds anything in a condition itself (it is the sandbox's doing); they remember it for what follows.
    for (const rule of RULES) rule.check({ kind: 'chaos', chaos }, client.memory);
  }

  /** Each rule's check of an event, in order; a rule that explains a refusal tells those after it. */
  private judge(
    client: ClientRecord,
    event: (explained: boolean) => ClientEvent,
    at: number,
    exchange: () => ReportedExchange,
    secrets: ObservedExchange['secrets'],
  ): void {
    let explained = false;
    for (const rule of RULES) {
      const detection = rule.check(event(explained), client.memory);
      if (!detection) continue;
      if (rule.explainsRefusal) explained = true;
      this.found(client, rule, detection, at, exchange, secrets);
    }
  }

  private found(
    client: ClientRecord,
    rule: Rule,
    detection: Detection,
    at: number,
    exchange: () => ReportedExchange,
    secrets: ObservedExchange['secrets'],
  ): void {
    const key = detection.variant === undefined ? rule.id : `${rule.id}\u0000${detection.variant}`;
    const known = client.findings.get(key);
    if (known) {
      known.count += 1;
      return;
    }
    if (client.findings.size >= MAX_FINDINGS_PER_CLIENT || this.findingsKept >= MAX_FINDINGS) {
      client.omittedFindings += 1;
      return;
    }
    this.findingsKept += 1;
    const detail = clip(redactorOf(secrets).text(detection.detail), 600);
    client.findings.set(key, { rule, variant: detection.variant, count: 1, detail, firstAt: at, firstExchange: exchange() });
  }

  private clientOf(principal: Principal, at: number): ClientRecord | undefined {
    let client = this.clients.get(principal.id);
    if (client) return client;
    if (this.clients.size >= MAX_CLIENTS) {
      this.omittedEvents += 1;
      return undefined;
    }
    client = {
      principal,
      firstSeen: at,
      requests: 0,
      callbacks: 0,
      memory: new ClientMemory(),
      findings: new Map(),
      chaos: [],
      omittedFindings: 0,
      omittedChaos: 0,
    };
    this.clients.set(principal.id, client);
    return client;
  }

  /** What a request says of how the client coped with the chaos conditions applied to it before. */
  private cope(client: ClientRecord, exchange: ObservedExchange): void {
    for (const record of client.chaos) {
      const { applied } = record;
      if (applied.requestId !== undefined && applied.requestId === exchange.requestId) {
        // The request it was applied to: what it asked for, to know it again.
        record.store ??= exchange.operation ? OPERATIONS[exchange.operation].store : undefined;
        record.fingerprint ??= exchange.fingerprint;
        continue;
      }
      if ((record.coping !== 'nothing since' && record.coping !== 'went on with other requests') || exchange.at < applied.at) continue;
      record.coping = copingBy(record, exchange) ?? 'went on with other requests';
    }
  }
}

function copingBy(record: ChaosRecord, exchange: ObservedExchange): Coping | undefined {
  const { applied } = record;
  const operation = exchange.operation ? OPERATIONS[exchange.operation] : undefined;
  if (!operation) return undefined;
  if (applied.referenceId !== undefined) {
    const same = exchange.referenceId !== undefined && idKey(exchange.referenceId) === idKey(applied.referenceId);
    if (same && operation.store) return 'retried with the same X-Reference-Id';
    if (same && operation.reads) return 'read the status';
    if (!same && operation.store && operation.store === record.store && exchange.fingerprint && exchange.fingerprint === record.fingerprint)
      return 'made it again under a new X-Reference-Id';
    return undefined;
  }
  return applied.operationId !== undefined && applied.operationId === exchange.operation ? 'sent the same request again' : undefined;
}
