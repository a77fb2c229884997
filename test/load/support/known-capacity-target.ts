import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { matchRoute } from '../../../core/catalogue/match.ts';
import { startEmbeddedSandbox, type RunningSandbox } from '../../../sandbox/start.ts';
import { targetEnvironment } from './target-environment.ts';

/**
 * A MoMo target whose capacity is known by construction: the faithful embedded sandbox behind one worker that
 * serves requests in the order they came, each for exactly 1/R seconds, and answers 503 to a request that would
 * wait longer than the backlog allows. So it answers at most R requests a second, whatever the load; below R, with
 * requests spread evenly, nobody waits. The bottleneck is on every operation (tokens, payments, status reads,
 * provisioning), or on the token operation only, where everything else is answered as it comes.
 *
 * It is a test double for the capacity search (test/load/known-capacity.k6.test.ts, and the benchmark
 * test/load/capacity-accuracy.ts): the search is right when it finds R.
 */
export type Bottleneck = 'every-operation' | 'tokens';

export interface KnownCapacityOptions {
  /** R: requests a second the worker serves. */
  ratePerSecond: number;
  bottleneck: Bottleneck;
  /** A request that would wait longer than this for the worker is answered 503 at once (default 2 s). */
  backlogSeconds?: number;
}

export interface KnownCapacityTarget {
  baseUrl: string;
  subscriptionKeys: RunningSandbox['subscriptionKeys'];
  /** The environment npm run capacity reads to load this target: PATH and HOME, MOMO_BASE_URL and the keys. */
  environment(): Record<string, string | undefined>;
  /** Requests the worker served, answered per whole second of the clock, and the 503s. */
  stats(): { served: number; refused: number; mostServedInASecond: number; tokensServed: number };
  close(): Promise<void>;
}

export async function startKnownCapacityTarget({
  ratePerSecond,
  bottleneck,
  backlogSeconds = 2,
}: KnownCapacityOptions): Promise<KnownCapacityTarget> {
  const sandbox = await startEmbeddedSandbox();
  const upstream = new Agent({ connections: 256, pipelining: 1 });
  const serviceMs = 1000 / ratePerSecond;
  let freeAt = 0;
  let served = 0;
  let refused = 0;
  let tokensServed = 0;
  const perSecond = new Map<number, number>();

  /** Forwards a request to the sandbox, and returns its answer once it and the service time are both done. */
  const forward = async (req: IncomingMessage, body: Buffer, doneNoEarlierThan: number) => {
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length', 'keep-alive'].includes(name)),
    ) as Record<string, string>;
    const answer = await request(`${sandbox.baseUrl}${req.url}`, {
      method: req.method as 'GET',
      headers,
      body: body.length ? body : undefined,
      dispatcher: upstream,
    });
    const bytes = Buffer.from(await answer.body.arrayBuffer());
    const wait = doneNoEarlierThan - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    return { status: answer.statusCode, headers: answer.headers, bytes };
  };

  const reply = (res: ServerResponse, status: number, headers: Record<string, string | string[] | undefined>, bytes: Buffer) => {
    const kept = Object.fromEntries(
      Object.entries(headers).filter(
        ([name, value]) => value !== undefined && !['connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(name),
      ),
    ) as Record<string, string | string[]>;
    res.writeHead(status, { ...kept, 'content-length': bytes.length }).end(bytes);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const isToken = matchRoute(req.method ?? 'GET', req.url ?? '/')?.operation.id === 'createAccessToken';
      const queued = bottleneck === 'every-operation' || isToken;
      const now = performance.now();
      let start = now;
      if (queued) {
        start = Math.max(now, freeAt);
        if (start - now > backlogSeconds * 1000) {
          refused += 1;
          res
            .writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' })
            .end(JSON.stringify({ statusCode: 503, message: 'Service unavailable: the queue is full' }));
          return;
        }
        freeAt = start + serviceMs;
      }
      const begin = () =>
        forward(req, body, queued ? start + serviceMs : 0).then(
          ({ status, headers, bytes }) => {
            if (queued) {
              served += 1;
              if (isToken) tokensServed += 1;
              const second = Math.floor(Date.now() / 1000);
              perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
            }
            reply(res, status, headers, bytes);
          },
          (error: Error) => res.writeHead(502, { 'content-type': 'text/plain' }).end(`known-capacity target: ${error.message}`),
        );
      if (start > now) setTimeout(begin, start - now);
      else void begin();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    subscriptionKeys: sandbox.subscriptionKeys,
    environment: () => targetEnvironment(baseUrl, sandbox.subscriptionKeys),
    stats: () => {
      // The current second is still filling: only whole seconds count.
      const now = Math.floor(Date.now() / 1000);
      const whole = [...perSecond].filter(([second]) => second < now).map(([, n]) => n);
      return { served, refused, mostServedInASecond: Math.max(0, ...whole), tokensServed };
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await upstream.close();
      await sandbox.close();
    },
  };
}
