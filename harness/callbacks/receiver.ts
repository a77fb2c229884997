import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One callback as it arrived. */
export interface ReceivedCallback {
  method: string;
  path: string;
  referenceId: string | undefined;
  contentType: string | undefined;
  /** Parsed JSON, or undefined when the body was not JSON. */
  body: unknown;
  rawBody: string;
  receivedAt: number;
}

const PATH = /^\/callbacks\/([^/?#]+)/;
const MAX_BODY = 256 * 1024;

/** Where the receiver listens, and how the target reaches it. */
export interface ReceiverOptions {
  /** The address to listen on (default 127.0.0.1). */
  bind?: string;
  /**
   * The receiver's public base URL as the target sees it, e.g. a tunnel's https://abc.example.app, without
   * a trailing slash: callback URLs are then <publicBaseUrl>/callbacks/<referenceId>, whatever port it listens on.
   */
  publicBaseUrl?: string;
}

/**
 * A local HTTP server that stands in for the partner's callback listener. Each transaction gets its own
 * URL, /callbacks/<referenceId>, so a callback is tied to its transaction by where it was sent. It accepts
 * PUT and POST (the docs tell listeners to accept both), and keeps everything: callbacks for ids it was
 * told to expect, duplicates, and unsolicited ones.
 */
export class CallbackReceiver {
  private server: Server | undefined;
  private readonly expected = new Set<string>();
  private readonly received: ReceivedCallback[] = [];
  private port = 0;
  private readonly bindAddress: string;
  private readonly publicBaseUrl: string | undefined;

  /** `host`: the host of the callback URLs when there is no public base URL (http://<host>:<port>). */
  constructor(private readonly host: string, options: ReceiverOptions = {}) {
    this.bindAddress = options.bind ?? '127.0.0.1';
    this.publicBaseUrl = options.publicBaseUrl?.replace(/\/+$/, '');
  }

  async start(port = 0): Promise<void> {
    this.server = createServer((request, response) => {
      readBody(request)
        .then((rawBody) => {
          if (rawBody === undefined) {
            response.writeHead(413, { connection: 'close' }).end();
            return;
          }
          this.record(request, rawBody);
          response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        })
        // Whatever a sender does, the receiver answers and keeps running.
        .catch(() => {
          if (!response.headersSent) response.writeHead(500).end();
        });
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', (error: Error & { code?: string }) => {
        this.server = undefined;
        const hint = error.code === 'EADDRINUSE' ? ': the port is taken (another run, or MOMO_CALLBACK_PORT with parallel workers)' : '';
        reject(new Error(`The callback receiver cannot listen on ${this.bindAddress} port ${port}${hint}: ${error.message}`, { cause: error }));
      });
      this.server!.listen(port, this.bindAddress, () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** The URL to give as X-Callback-Url for a transaction, and a note that its callback is expected. */
  urlFor(referenceId: string): string {
    this.expected.add(referenceId.toLowerCase());
    return `${this.baseUrl}/callbacks/${referenceId}`;
  }

  /**
   * Where the target reaches the receiver: the public base URL when one was given, else
   * http://<host>:<port it listens on>, e.g. http://127.0.0.1:40123. Callbacks go to <baseUrl>/callbacks/<referenceId>.
   */
  get baseUrl(): string {
    return this.publicBaseUrl ?? `http://${this.host}:${this.port}`;
  }

  /** The port it listens on (once started). */
  get listeningPort(): number {
    return this.port;
  }

  /** Every callback received, in order of arrival. */
  all(): readonly ReceivedCallback[] {
    return this.received;
  }

  callbacksFor(referenceId: string): ReceivedCallback[] {
    const id = referenceId.toLowerCase();
    return this.received.filter((c) => c.referenceId === id);
  }

  /** Callbacks nobody asked for: to an id never handed out, or to a path that is not a callback URL. */
  unsolicited(): ReceivedCallback[] {
    return this.received.filter((c) => c.referenceId === undefined || !this.expected.has(c.referenceId));
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }

  private record(request: IncomingMessage, rawBody: string): void {
    const path = request.url ?? '/';
    const match = PATH.exec(path);
    let referenceId: string | undefined;
    try {
      referenceId = match ? decodeURIComponent(match[1]!).toLowerCase() : undefined;
    } catch {
      referenceId = undefined; // a malformed percent-encoding: kept as unsolicited
    }
    let body: unknown;
    try {
      body = rawBody ? JSON.parse(rawBody) : undefined;
    } catch {
      body = undefined;
    }
    this.received.push({
      method: request.method ?? 'GET',
      path,
      referenceId,
      contentType: request.headers['content-type'],
      body,
      rawBody,
      receivedAt: Date.now(),
    });
  }
}

/** The body as text, or undefined when it is over the limit (read to its end, so a 413 can still be sent). */
function readBody(request: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = Number(request.headers['content-length'] ?? 0);
    let tooLarge = size > MAX_BODY;
    if (!tooLarge) size = 0;
    request.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > MAX_BODY) {
        tooLarge = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(tooLarge ? undefined : Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}
