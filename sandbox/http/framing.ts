import type { FastifyInstance } from 'fastify';
import { sendBadRequest } from './replies.ts';

/**
 * A request whose body has no length a server can trust is refused before any route answers it (RFC 9112 §6.3):
 * a Transfer-Encoding that does not end in chunked gets 400, and a transfer coding before chunked that the sandbox
 * does not decode (gzip, say) gets 501 (RFC 9112 §6.1); either way the connection is closed, since what follows on it
 * cannot be told apart from the body. Node frames only chunked, so it hands such a request on, with its body left in
 * the stream: answered by a route, the rest would be read as a next request (a smuggling vector).
 */
export function refuseUnframedRequests(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    const encoding = request.headers['transfer-encoding'];
    if (encoding === undefined) return done();
    const codings = encoding
      .split(',')
      .map((coding) => coding.trim().toLowerCase())
      .filter(Boolean);
    if (codings.length === 1 && codings[0] === 'chunked') return done();
    reply.header('connection', 'close');
    const shown = encoding.length > 80 ? `${encoding.slice(0, 80)}…` : encoding;
    if (codings.at(-1) !== 'chunked')
      return sendBadRequest(
        reply,
        `Transfer-Encoding "${shown}" does not end in chunked, so the body has no length; send it chunked or with Content-Length.`,
      );
    return sendBadRequest(reply, `Transfer-Encoding "${shown}" has a coding the sandbox does not decode; send the body chunked only.`, 501);
  });
}
