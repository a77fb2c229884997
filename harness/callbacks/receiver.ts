import { randomBytes } from 'node:crypto';
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
  /** The status the receiver answered it with: 500 for a delivery it was told to refuse, 204 where it answers no content, 200 otherwise. */
  answered: number;
}

/** A callback URL's path, whole: /callbacks/<the receiver's secret segment>/<referenceId>, and nothing more (its query apart). */
const PATH = /^\/callbacks\/([^/?#]+)\/([^/?#]+)$/;
const MAX_BODY = 256 * 1024;

/** Where the receiver listens, and how the target reaches it. */
export interface ReceiverOptions {
  /** The address to listen on (default 127.0.0.1). */
  bind?: string;
  /**
   * The receiver's public base URL as the target sees it, e.g. a tunnel's https://abc.example.app, without
   * a trailing slash: callback URLs are then <publicBaseUrl>/callbacks/<secret>/<referenceId>, whatever port it listens on.
   */
  publicBaseUrl?: string;
}

/**
 * A local HTTP server that stands in for the partner's callback listener. Each transaction gets its own
 * URL, /callbacks/<secret>/<referenceId>, so a callback is tied to its transaction by exactly where it was sent:
 * a callback to any other path (another segment after it, a query) is not that transaction's. The secret segment
 * is new for each receiver, so that whoever merely learns a reference id cannot forge a callback and sway a
 * verdict: a callback without it is unsolicited. It accepts PUT and POST (the docs tell listeners to accept both),
 * and keeps everything: callbacks for ids it was told to expect, duplicates, and unsolicited ones.
 */
export class CallbackReceiver {
  private server: Server | undefined;
  private readonly expected = new Set<string>();
  /** The query of each callback URL handed out, by reference id. */
  private readonly queries = new Map<string, string>();
  private readonly received: ReceivedCallback[] = [];
  /** Reference ids whose next callback the receiver refuses (500), as a partner's listener that is down for a moment. */
  private readonly refusing = new Set<string>();
  private readonly answeringNoContent = new Set<string>();
  private port = 0;
  private readonly bindAddress: string;
  private readonly publicBaseUrl: string | undefined;
  /** The path segment every callback URL of this receiver carries: unguessable, and new for each receiver. */
  private readonly secret = randomBytes(12).toString('base64url');

  /** `host`: the host of the callback URLs when there is no public base URL (http://<host>:<port>). */
  constructor(
    private readonly host: string,
    options: ReceiverOptions = {},
  ) {
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
          const callback = this.record(request, rawBody);
          if (callback.answered === 204) response.writeHead(204).end();
          else response.writeHead(callback.answered, { 'content-type': 'application/json' }).end('{}');
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
        reject(
          new Error(`The callback receiver cannot listen on ${this.bindAddress} port ${port}${hint}: ${error.message}`, { cause: error }),
        );
      });
      this.server!.listen(port, this.bindAddress, () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  /**
   * The URL to give as X-Callback-Url for a transaction, and a note that its callback is expected. It carries a query
   * of its own, as a partner's often does (an order number): §6 sends the callback to the URL given, so one that
   * arrives without that query, or with another, did not arrive there.
   */
  urlFor(referenceId: string): string {
    const id = referenceId.toLowerCase();
    this.expected.add(id);
    let query = this.queries.get(id);
    if (query === undefined) {
      query = `order=${randomBytes(6).toString('base64url')}`;
      this.queries.set(id, query);
    }
    return `${this.baseUrl}/callbacks/${this.secret}/${referenceId}?${query}`;
  }

  /**
   * The URL to give for a transaction, as urlFor, whose first callback the receiver refuses with 500: a partner's
   * listener down for a moment, which a target that retries calls again.
   */
  refusingFirstUrlFor(referenceId: string): string {
    this.refusing.add(referenceId.toLowerCase());
    return this.urlFor(referenceId);
  }

  /**
   * The URL to give for a transaction, as urlFor, whose callbacks the receiver answers 204 No Content: a success
   * (RFC 9110 §15.3), which a target must not take for a failure to deliver and send again.
   */
  noContentUrlFor(referenceId: string): string {
    this.answeringNoContent.add(referenceId.toLowerCase());
    return this.urlFor(referenceId);
  }

  /**
   * Where the target reaches the receiver: the public base URL when one was given, else
   * http://<host>:<port it listens on>, e.g. http://127.0.0.1:40123. Callbacks go to <baseUrl>/callbacks/<secret>/<referenceId>.
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

  /** Callbacks nobody asked for: to an id never handed out, or to a path that is not exactly a callback URL of this receiver. */
  unsolicited(): ReceivedCallback[] {
    return this.received.filter((c) => c.referenceId === undefined || !this.expected.has(c.referenceId));
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }

  private record(request: IncomingMessage, rawBody: string): ReceivedCallback {
    const path = request.url ?? '/';
    const queryAt = path.indexOf('?');
    const match = PATH.exec(queryAt < 0 ? path : path.slice(0, queryAt));
    let referenceId: string | undefined;
    try {
      referenceId = match && match[1] === this.secret ? decodeURIComponent(match[2]!).toLowerCase() : undefined;
    } catch {
      referenceId = undefined; // a malformed percent-encoding: kept as unsolicited
    }
    // Not the URL handed out unless its query is too: a callback without it, or with another, came elsewhere.
    const query = queryAt < 0 ? undefined : path.slice(queryAt + 1);
    if (referenceId !== undefined && query !== this.queries.get(referenceId)) referenceId = undefined;
    let body: unknown;
    try {
      body = rawBody ? JSON.parse(rawBody) : undefined;
    } catch {
      body = undefined;
    }
    const refused = referenceId !== undefined && this.refusing.delete(referenceId);
    const callback: ReceivedCallback = {
      method: request.method ?? 'GET',
      path,
      referenceId,
      contentType: request.headers['content-type'],
      body,
      rawBody,
      receivedAt: Date.now(),
      answered: refused ? 500 : referenceId !== undefined && this.answeringNoContent.has(referenceId) ? 204 : 200,
    };
    this.received.push(callback);
    return callback;
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
