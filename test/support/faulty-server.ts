import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * How the server fails, once its healthy requests are used up:
 * - reset: destroys the connection on every request (the client sees ECONNRESET);
 * - slow: answers, faithfully, only after `delayMs`, longer than the harness waits;
 * - html: every 2xx answer comes with an HTML page in place of its body (a web server, a captive portal);
 * - broken-json: every 2xx answer with a body comes as application/json, cut off halfway (not JSON);
 * - gateway-html: a gateway's HTML error page with 502, in place of every answer;
 * - 503-storm: 503 Service Unavailable with Retry-After, in place of every answer;
 * - huge-body: 200 with a JSON body of `bodyBytes` (100 MB by default), made as the client reads it, never held;
 * - endless-body: 200 with a JSON body that never ends, sent as fast as the client reads;
 * - drip-body: 200 at once, then a body of one byte every `delayMs` (100 ms by default), without end;
 * - redirect: 307 Temporary Redirect to the same path on the same server, in place of every answer;
 * - none: every request goes through (with `tls`, a faithful server behind a certificate).
 */
export type Fault =
  | 'reset'
  | 'slow'
  | 'html'
  | 'broken-json'
  | 'gateway-html'
  | '503-storm'
  | 'huge-body'
  | 'endless-body'
  | 'drip-body'
  | 'redirect'
  | 'none';

export interface FaultyServerOptions {
  fault: Fault;
  /** The faithful server behind (a reference sandbox); needed by slow, html, broken-json, none and healthyRequests. */
  upstream?: string;
  /** How many requests (the run's probe counts as one) are served faithfully before the fault starts. */
  healthyRequests?: number;
  /** How long a slow answer takes; for drip-body, the time between two bytes. */
  delayMs?: number;
  /** How long a huge body is, in bytes. */
  bodyBytes?: number;
  /** Serve HTTPS with this key and certificate (PEM). */
  tls?: { key: string; cert: string };
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const GATEWAY_PAGE =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
const WEB_PAGE =
  '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Welcome</title></head>\n<body><h1>Welcome</h1><p>Sign in to continue.</p></body></html>\n';
// Framing headers describe the upstream's body; the answer sent on may have another.
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/** A target that fails the way real ones do, for tests of what a run reports when it cannot test. */
export class FaultyServer {
  /** Requests received so far, the run's probe included. */
  received = 0;
  private server: Server | undefined;
  private readonly stopping = new AbortController();

  constructor(private readonly options: FaultyServerOptions) {
    const needsUpstream = ['slow', 'html', 'broken-json', 'none'].includes(options.fault) || (options.healthyRequests ?? 0) > 0;
    if (needsUpstream && !options.upstream)
      throw new Error(`the fault "${options.fault}" (or healthy requests) needs an upstream server to pass requests to`);
  }

  async start(): Promise<string> {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch(() => res.destroy());
    };
    this.server = this.options.tls ? createHttpsServer(this.options.tls, handler) : createHttpServer(handler);
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', () => resolve()));
    return `${this.options.tls ? 'https' : 'http'}://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.received += 1;
    const fault = this.received <= (this.options.healthyRequests ?? 0) ? 'none' : this.options.fault;
    switch (fault) {
      case 'reset':
        req.socket.resetAndDestroy();
        return;
      case 'gateway-html':
        res.writeHead(502, { 'content-type': 'text/html' }).end(GATEWAY_PAGE);
        return;
      case '503-storm':
        res
          .writeHead(503, { 'content-type': 'application/json', 'retry-after': '30' })
          .end(JSON.stringify({ statusCode: 503, message: 'Service Unavailable' }));
        return;
      case 'slow':
        await delay(this.options.delayMs ?? 5_000, undefined, { signal: this.stopping.signal });
        return send(res, await this.forward(req));
      case 'html':
        return send(
          res,
          whenSuccessful(await this.forward(req), () => ({ type: 'text/html; charset=utf-8', body: WEB_PAGE })),
        );
      case 'broken-json':
        return send(
          res,
          whenSuccessful(await this.forward(req), (body) =>
            body.length > 0 ? { type: 'application/json', body: body.subarray(0, Math.ceil(body.length / 2)).toString() } : undefined,
          ),
        );
      case 'huge-body':
        return streamJson(res, this.options.bodyBytes ?? 100 * 1024 * 1024);
      case 'endless-body':
        return streamJson(res, Infinity);
      case 'drip-body': {
        res.writeHead(200, { 'content-type': 'application/json' }).write('{');
        const drip = setInterval(() => res.write(' '), this.options.delayMs ?? 100);
        res.on('close', () => clearInterval(drip));
        return;
      }
      case 'redirect':
        res.writeHead(307, { location: `http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, 'content-length': '0' }).end();
        return;
      case 'none':
        return send(res, await this.forward(req));
    }
  }

  /** The upstream's answer to the request, read whole. */
  private async forward(req: IncomingMessage): Promise<Answer> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return new Promise((resolve, reject) => {
      const upstream = httpRequest(
        new URL(req.url ?? '/', this.options.upstream),
        { method: req.method, headers: req.headers },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => body.push(chunk));
          answer.on('end', () => resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(body) }));
          answer.on('error', reject);
        },
      );
      upstream.on('error', reject);
      upstream.end(Buffer.concat(chunks));
    });
  }
}

/**
 * 200 with the JSON record {"padding":"xxx…"} of `bytes` bytes (Infinity: without end), written as the client
 * reads it (on drain), so the test holds one 64 KiB piece whatever the size, and stops when the client goes.
 */
function streamJson(res: ServerResponse, bytes: number): void {
  const head = Buffer.from('{"padding":"');
  const tail = Buffer.from('"}');
  const padding = Buffer.alloc(64 * 1024, 'x');
  res.writeHead(200, { 'content-type': 'application/json', ...(Number.isFinite(bytes) ? { 'content-length': String(bytes) } : {}) });
  let sent = 0;
  const pump = () => {
    while (!res.destroyed) {
      if (sent === 0) {
        sent = head.length;
        if (!res.write(head)) return;
        continue;
      }
      if (sent >= bytes) return;
      const room = bytes - tail.length - sent;
      if (room <= 0) {
        sent = bytes;
        res.end(tail);
        return;
      }
      const piece = room < padding.length ? padding.subarray(0, room) : padding;
      sent += piece.length;
      if (!res.write(piece)) return;
    }
  };
  res.on('drain', pump);
  pump();
}

/** The answer with a 2xx body replaced, when `replace` gives a replacement. */
function whenSuccessful(answer: Answer, replace: (body: Buffer) => { type: string; body: string } | undefined): Answer {
  const replacement = answer.status >= 200 && answer.status < 300 ? replace(answer.body) : undefined;
  if (!replacement) return answer;
  return { status: answer.status, headers: { ...answer.headers, 'content-type': replacement.type }, body: Buffer.from(replacement.body) };
}

function send(res: ServerResponse, answer: Answer): void {
  const headers = Object.fromEntries(Object.entries(answer.headers).filter(([name, value]) => value !== undefined && !FRAMING.has(name)));
  res.writeHead(answer.status, headers as Record<string, string | string[]>).end(answer.body);
}

/** A URL where nothing listens: a port this machine just gave out and took back. */
export async function refusingUrl(): Promise<string> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** A host under .invalid, which RFC 2606 reserves so that it never resolves: a DNS error with no network. */
export const UNRESOLVABLE_URL = 'http://momo-target.invalid';

/**
 * A self-signed certificate for 127.0.0.1, made now with openssl (key, certificate and the certificate's file,
 * for NODE_EXTRA_CA_CERTS); or why it could not be made.
 */
export function selfSignedCertificate(): { key: string; cert: string; certFile: string } | { unavailable: string } {
  const dir = mkdtempSync(join(tmpdir(), 'momo-tls-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        keyFile,
        '-out',
        certFile,
      ],
      { stdio: 'pipe' },
    );
  } catch (error) {
    return {
      unavailable: `openssl could not make a self-signed certificate (${(error as Error).message.split('\n')[0]}); install openssl to run this case`,
    };
  }
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}
