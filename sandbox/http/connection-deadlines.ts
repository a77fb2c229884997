import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';

/**
 * Deadlines for every connection, kept by the sandbox itself as well as by Node.
 *
 * Node times a request from its first byte (headersTimeout, requestTimeout), but only once its parser has begun
 * an HTTP message. Between requests a kept-alive connection has just a socket inactivity timer (keepAliveTimeout),
 * which every chunk that arrives restarts, whether or not it begins a request. So a caller that, after one
 * request, sends an empty line every few seconds (a server ignores empty lines before a request line, RFC 9112
 * §2.2) holds its connection for ever: its bytes begin no message, and each one restarts the keep-alive timer
 * (docs/upstream-reports.md, "Node: a kept-alive connection that sends empty lines is never timed out").
 *
 * So the sandbox checks each connection on the same interval as Node, from what a server can see of any caller:
 * the bytes read, and the requests and answers on the connection. A connection that owes a request, or the rest
 * of one, longer than the timeouts allow is answered 408 and closed, as Node would have; one that waits for the
 * sandbox's own answer is left alone. The deadlines are Node's, never shorter, so no caller that Node serves is cut.
 */

export interface ConnectionTimeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

/**
 * How often Node and the sandbox look for overdue connections: well under the headers timeout (a caller is
 * dropped within about a quarter of a timeout of its deadline), and at most once a second.
 */
export function checkingIntervalMs({ headersTimeoutMs }: Pick<ConnectionTimeouts, 'headersTimeoutMs'>): number {
  return Math.max(25, Math.min(1000, Math.floor(headersTimeoutMs / 4)));
}

/** How long a dropped caller that owes bytes has to read the 408 before its connection is reset. */
const RESET_AFTER_MS = 200;

/** Node closes an idle kept-alive connection this long after keepAliveTimeout (HTTP_SERVER_KEEP_ALIVE_TIMEOUT_BUFFER). */
const KEEP_ALIVE_BUFFER_MS = 1000;

const REQUEST_TIMEOUT_BODY = JSON.stringify({
  statusCode: 408,
  error: 'Request Timeout',
  message:
    'The request did not arrive whole in time (--headers-timeout-ms for its headers, --request-timeout-ms for all of it); send it at once.',
});
const REQUEST_TIMEOUT_ANSWER =
  'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n' +
  `Content-Length: ${Buffer.byteLength(REQUEST_TIMEOUT_BODY)}\r\n\r\n${REQUEST_TIMEOUT_BODY}`;

/** Reads nothing more from a caller that owes bytes, and resets its connection once a 408 had a moment to arrive. */
function resetSoon(socket: Socket): void {
  socket.pause();
  setTimeout(() => (socket.destroyed ? undefined : socket.resetAndDestroy()), RESET_AFTER_MS).unref();
}

/**
 * Fastify's clientErrorHandler: as Fastify's own (a JSON 400, 408 or 431, then close), except that a caller past
 * Node's request timeout is reset rather than closed, for the reason resetSoon gives.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, label] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large']
        : [400, 'Bad Request'];
  const body = JSON.stringify({ error: label, message: 'Client Error', statusCode: status });
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${label}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\n\r\n${body}`,
    );
  if (status === 408) resetSoon(socket);
  else socket.destroy(error);
}

/** What the sandbox knows of one connection. */
interface Watch {
  /** Since when the connection has owed nothing: when it opened, or when a check first saw its last answer sent. */
  idleSince: number;
  /** The socket's bytesRead at idleSince. */
  bytesReadWhenIdle: number;
  /** When a check first saw bytes after idleSince: a request beginning, or something that never becomes one. */
  bytesSeenAt: number | undefined;
  /** The latest request on the connection and its answer; under pipelining the earlier ones are answered first. */
  request?: IncomingMessage;
  response?: ServerResponse;
  /** When the latest request began: its first bytes as a check saw them, else when its headers arrived. */
  requestStartedAt: number;
  /** The answer whose end began the current idle time. */
  answered?: ServerResponse;
}

/** Why a connection is overdue, for the log; undefined while it is within its deadlines. */
type Overdue = 'headers' | 'request' | 'idle';

export interface ConnectionDeadlines {
  /** Connections watched now: one an open connection, none once they are closed. */
  watched(): number;
}

/** Watches every connection of the server while it listens, and drops those past their deadlines. */
export function enforceConnectionDeadlines(server: Server, timeouts: ConnectionTimeouts, log: FastifyBaseLogger): ConnectionDeadlines {
  const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs } = timeouts;
  const watches = new Map<Socket, Watch>();

  server.on('connection', (socket: Socket) => {
    watches.set(socket, { idleSince: performance.now(), bytesReadWhenIdle: 0, bytesSeenAt: undefined, requestStartedAt: 0 });
    socket.once('close', () => watches.delete(socket));
  });

  // Headers complete. The request is timed from its first bytes if a check saw them (an earlier request's answer
  // was sent before they came), else from now: never earlier than Node times it.
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const watch = watches.get(request.socket);
    if (!watch) return;
    watch.requestStartedAt = watch.bytesSeenAt ?? performance.now();
    watch.bytesSeenAt = undefined;
    watch.request = request;
    watch.response = response;
  });

  const overdue = (socket: Socket, watch: Watch, now: number): Overdue | undefined => {
    const { request, response } = watch;
    // The caller owes the rest of a request (its body), whether or not the sandbox has answered already.
    if (request && !request.complete) return now - watch.requestStartedAt > requestTimeoutMs ? 'request' : undefined;
    // The sandbox is answering (a slow plugin, say), or the caller is reading its answer: not the caller's request.
    if (response && !response.writableFinished) return undefined;
    if (response && watch.answered !== response) {
      watch.answered = response;
      watch.idleSince = now;
      watch.bytesReadWhenIdle = socket.bytesRead;
      watch.bytesSeenAt = undefined;
    }
    if (watch.bytesSeenAt === undefined && socket.bytesRead > watch.bytesReadWhenIdle) watch.bytesSeenAt = now;
    if (watch.bytesSeenAt !== undefined) return now - watch.bytesSeenAt > headersTimeoutMs ? 'headers' : undefined;
    // Silent: a new connection has the headers timeout to begin, a kept-alive one Node's keep-alive time.
    const silence = response ? keepAliveTimeoutMs + KEEP_ALIVE_BUFFER_MS : headersTimeoutMs;
    return now - watch.idleSince > silence ? 'idle' : undefined;
  };

  const drop = (socket: Socket, watch: Watch, why: Overdue) => {
    watches.delete(socket);
    log.debug({ remoteAddress: socket.remoteAddress, why }, 'dropped a connection past its deadline');
    // Answer 408 unless an answer is being written: its bytes would corrupt it.
    const answering = watch.response?.headersSent && !watch.response.writableFinished;
    if (socket.writable && !answering) socket.write(REQUEST_TIMEOUT_ANSWER);
    if (why === 'idle') {
      socket.destroy();
      return;
    }
    // A caller that owes bytes and neither reads nor writes never learns of a FIN (its socket closes only once it
    // reads), so it would hold its end for ever. A reset it learns of at once: read nothing more, give the 408 a
    // moment to arrive, then reset.
    resetSoon(socket);
  };

  const check = () => {
    const now = performance.now();
    for (const [socket, watch] of watches) {
      if (socket.destroyed) {
        watches.delete(socket);
        continue;
      }
      const why = overdue(socket, watch, now);
      if (why) drop(socket, watch, why);
    }
  };

  let checker: NodeJS.Timeout | undefined;
  server.on('listening', () => {
    clearInterval(checker);
    checker = setInterval(check, checkingIntervalMs(timeouts)).unref();
  });
  server.on('close', () => clearInterval(checker));
  return { watched: () => watches.size };
}
