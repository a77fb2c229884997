/**
 * One client in one profile, in a process of its own: clients read their settings when they are loaded, keep
 * tokens for the life of the process, and the suite patches node:http for those that hard-code the live host.
 * Starts the sandbox, with its client report, and a recording proxy in front of it, runs each of the client's
 * flows in turn with a deadline, and writes to the folder every flow's outcome with the exchanges it made (as
 * the proxy saw them) and the findings of the client report it raised (results.json), and, as the sandbox
 * closes, the client report itself (client-report.html, .json and .junit.xml).
 *
 *   node --import tsx test/interop/support/run-client.ts <client> <profile> <folder> [--strict]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Product } from '../../../core/products.ts';
import { PROFILES, type ProfileName } from '../../../core/profiles.ts';
import { MomoClient } from '../../../harness/client/momo-client.ts';
import { Redactor } from '../../../core/secrets/redact.ts';
import type { ClientReportDocument } from '../../../sandbox/client-report/report.ts';
import { describeRuleSource } from '../../../sandbox/client-report/rules.ts';
import { startEmbeddedSandbox } from '../../../sandbox/start.ts';
import { AlteringProxy, type ProxiedExchange } from '../../support/altering-proxy.ts';
import type { FlowFinding, FlowResult, InteropClient, InteropEnv } from './types.ts';

/** A flow that takes longer is abandoned as failed: every client here finishes a flow in well under a second. */
export const FLOW_DEADLINE_MS = 20_000;
const CALLBACK_HOST = '127.0.0.1';

async function main([name, profile, folder, mode]: string[]): Promise<void> {
  if (!name || !folder || !(PROFILES as readonly string[]).includes(profile ?? '') || (mode !== undefined && mode !== '--strict')) {
    throw new Error('usage: run-client.ts <client> <spec|mtn-sandbox> <folder> [--strict]');
  }
  const strict = mode === '--strict';
  mkdirSync(folder, { recursive: true });
  const { client } = (await import(`../clients/${name}.ts`)) as { client: InteropClient };
  const listener = await startCallbackListener();
  const sandbox = await startEmbeddedSandbox({
    profile: profile as ProfileName,
    strict,
    delayedSuccessMs: 200,
    pendingTimeoutMs: 1000,
    // Long enough that a callback answered at once is never slow, even on a busy machine.
    callbackTimeoutMs: 5000,
    callbackRetryDelaysMs: [],
    clientReport: folder,
  });
  const report = sandbox.sandbox.clientReport!;
  const exchanges: ProxiedExchange[] = [];
  const proxy = new AlteringProxy(sandbox.baseUrl, (exchange) => void exchanges.push(exchange));
  const proxyUrl = await proxy.start();
  // The suite's own API users come straight from the sandbox, so the proxy records only what the client sends.
  const harness = new MomoClient({
    baseUrl: sandbox.baseUrl,
    sandboxUrl: sandbox.baseUrl,
    subscriptionKeys: sandbox.subscriptionKeys,
    targetEnvironment: 'sandbox',
    connectTimeoutMs: 2_000,
    requestTimeoutMs: 5_000,
    redactor: new Redactor(),
  });
  // A fresh API user for each flow and product, so each flow's report is its own (a client is an API user there).
  let users = new Map<Product, Promise<{ userId: string; apiKey: string }>>();
  const env: InteropEnv = {
    baseUrl: proxyUrl,
    host: new URL(proxyUrl).host,
    profile: profile as ProfileName,
    keys: sandbox.subscriptionKeys,
    callbackHost: CALLBACK_HOST,
    callbackUrl: listener.url,
    apiUser: (product) => {
      let user = users.get(product);
      if (!user) {
        user = provision(harness, product);
        users.set(product, user);
      }
      return user;
    },
  };
  const results: FlowResult[] = [];
  try {
    await client.prepare?.(env);
    for (const [flow, run] of Object.entries(client.flows)) {
      users = new Map();
      const from = exchanges.length;
      const before = findingCounts(report.document());
      const outcome = await withDeadline(run(env), FLOW_DEADLINE_MS).then(
        () => undefined,
        (error: unknown) => describe(error),
      );
      await sandbox.sandbox.context.callbacks.settled();
      results.push({
        client: client.name,
        flow,
        profile: profile as ProfileName,
        strict,
        ok: outcome === undefined,
        ...(outcome ? { error: outcome } : {}),
        exchanges: exchanges
          .slice(from)
          .map((e) => ({ method: e.method, path: e.path, status: e.status, requestBody: e.requestBody, responseBody: e.body })),
        findings: raisedSince(before, report.document()),
      });
    }
  } finally {
    writeFileSync(join(folder, 'results.json'), JSON.stringify(results));
    await harness.close();
    await proxy.stop();
    await sandbox.close();
    await listener.close();
  }
}

const findingKey = (client: string, rule: string, detail: string) => `${client}\u0000${rule}\u0000${detail}`;

function findingCounts(report: ClientReportDocument): Map<string, number> {
  return new Map(report.clients.flatMap((c) => c.findings.map((f) => [findingKey(c.id, f.rule, f.detail), f.count] as const)));
}

/** The report's findings that came, first or again, since the counts were taken. */
function raisedSince(before: ReadonlyMap<string, number>, report: ClientReportDocument): FlowFinding[] {
  return report.clients.flatMap((c) =>
    c.findings
      .filter((f) => (before.get(findingKey(c.id, f.rule, f.detail)) ?? 0) < f.count)
      .map((f) => ({
        rule: f.rule,
        name: f.name,
        severity: f.severity,
        ...(f.stake ? { stake: f.stake } : {}),
        client: c.label,
        detail: f.detail,
        source: describeRuleSource(f.source),
        fix: f.fix,
        exchange: {
          method: f.firstExchange.method,
          target: f.firstExchange.target,
          ...(f.firstExchange.status !== undefined ? { status: f.firstExchange.status } : {}),
          ...(f.firstExchange.requestBody !== undefined ? { requestBody: f.firstExchange.requestBody } : {}),
          ...(f.firstExchange.responseBody !== undefined ? { responseBody: f.firstExchange.responseBody } : {}),
        },
      })),
  );
}

/** A callback listener on 127.0.0.1 that answers 200 at once. */
async function startCallbackListener(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((resolve) => server.listen(0, CALLBACK_HOST, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${CALLBACK_HOST}:${port}/momo/callbacks`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function provision(harness: MomoClient, product: Product): Promise<{ userId: string; apiKey: string }> {
  const userId = randomUUID();
  const created = await harness.createApiUser(product, userId, CALLBACK_HOST);
  if (created.status !== 201) throw new Error(`the suite could not provision a ${product} API user: ${created.status}`);
  const key = await harness.createApiKey(product, userId);
  return { userId, apiKey: (key.json as { apiKey: string }).apiKey };
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no outcome within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** What a client threw, in one line: its message, and the HTTP status an axios-style error carries. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const status = (error as { response?: { status?: number } }).response?.status;
  return `${error.name}: ${error.message}${status ? ` (HTTP ${status})` : ''}`.split('\n')[0]!.slice(0, 300);
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (error: Error) => {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  },
);
