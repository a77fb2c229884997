import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../domain/context.ts';
import { buildOpenApiDocument, serverUrlOf, withServer } from '../http/openapi.ts';
import { DIFFERENCES } from '../../core/profiles.ts';
import { PACKAGE_ROOT } from '../../core/package.ts';

const { version } = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };

/** Operations about the sandbox itself; they need no subscription key. */
export function registerMeta(app: FastifyInstance, context: SandboxContext): void {
  const { settings } = context;
  let openApi: Record<string, unknown> | undefined;

  app.get('/health', async (request) => {
    // Benchmarks start the sandbox with --expose-gc and ask for a collection first, so memory is comparable.
    const gc = (globalThis as { gc?: () => void }).gc;
    if (gc && (request.query as { gc?: string }).gc === '1') gc();
    const memory = process.memoryUsage();
    const { state } = context;
    return {
      status: 'ok',
      version,
      profile: settings.profile,
      records: {
        apiUsers: state.apiUsers.size,
        requestToPay: state.transactions.requesttopay.size,
        requestToWithdraw: state.transactions.requesttowithdraw.size,
        deposit: state.transactions.deposit.size,
        refund: state.transactions.refund.size,
        transfer: state.transactions.transfer.size,
        consentRequests: state.consentRequests.size,
      },
      memory: { heapUsedBytes: memory.heapUsed, rssBytes: memory.rss },
    };
  });

  // Built once; the server is the one each caller reached the sandbox at.
  app.get('/openapi.json', async (request) => {
    openApi ??= buildOpenApiDocument({ profile: settings.profile, version, strict: settings.strict, scopes: settings.scopes });
    return withServer(openApi, serverUrlOf(request.headers.host, app.server.address()));
  });

  app.get('/profile', async () => ({
    profile: settings.profile,
    differences: Object.fromEntries(
      Object.entries(DIFFERENCES).map(([key, d]) => [key, { active: d[settings.profile], explanation: d.explanation }]),
    ),
  }));
}
