import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import type { OperationId } from '../../core/catalogue/operations.ts';
import { matchRoute } from '../../core/catalogue/match.ts';
import type { Product } from '../../core/products.ts';

/** One exchange as the proxy saw it, for an alteration to rewrite. */
export interface ProxiedExchange {
  method: string;
  path: string;
  /** The catalogue operation at this method and path, and the product it was called under. */
  operation: OperationId | undefined;
  product: Product | undefined;
  requestHeaders: Record<string, string | string[] | undefined>;
  requestBody: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Returns the exchange to send back (changed or not); undefined forwards it unchanged. A body given as bytes
 * goes out as they are (bytes that are not UTF-8, say); a header value is written as Node writes it, one byte
 * per character (latin1).
 */
export type Alteration = (
  exchange: ProxiedExchange,
) => (Partial<Pick<ProxiedExchange, 'status' | 'headers'>> & { body?: string | Buffer }) | undefined;

/**
 * A reverse proxy in front of a server, which can rewrite any answer: a faithful server made to break one
 * rule, to show that the suite notices.
 */
export class AlteringProxy {
  private server: Server | undefined;

  constructor(
    private readonly upstream: string,
    private readonly alter: Alteration,
  ) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      this.forward(req).then(
        ({ status, headers, body }) => res.writeHead(status, headers).end(body),
        (error: Error) => res.writeHead(502, { 'content-type': 'text/plain' }).end(`proxy: ${error.message}`),
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', () => resolve()));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async forward(req: IncomingMessage): Promise<{ status: number; headers: Record<string, string>; body: string | Buffer }> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const requestBody = Buffer.concat(chunks).toString('utf8');
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
    ) as Record<string, string>;
    const upstream = await request(`${this.upstream}${req.url}`, { method: req.method as 'GET', headers, body: requestBody || undefined });
    const body = await upstream.body.text();
    const upstreamHeaders: Record<string, string> = {};
    for (const [name, value] of Object.entries(upstream.headers)) {
      if (value !== undefined && !['content-length', 'connection', 'keep-alive', 'transfer-encoding'].includes(name))
        upstreamHeaders[name] = String(value);
    }
    const matched = matchRoute(req.method ?? 'GET', req.url ?? '/');
    const exchange: ProxiedExchange = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      operation: matched?.operation.id,
      product: matched?.product,
      requestHeaders: req.headers,
      requestBody,
      status: upstream.statusCode,
      headers: upstreamHeaders,
      body,
    };
    const change = this.alter(exchange) ?? {};
    return { status: change.status ?? exchange.status, headers: change.headers ?? exchange.headers, body: change.body ?? exchange.body };
  }
}
