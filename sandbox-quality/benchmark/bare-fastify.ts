import Fastify from 'fastify';
import { pathOf } from '../../core/catalogue/routes.ts';

/**
 * The Node ceiling for the benchmarks: Fastify answering 202 to the request-to-pay route with no auth,
 * no validation and no state. `tsx sandbox-quality/benchmark/bare-fastify.ts <port>`.
 */
const app = Fastify({ logger: false });
app.post(pathOf('requestToPay'), async (_request, reply) => reply.code(202).send());
await app.listen({ host: '127.0.0.1', port: Number(process.argv[2] ?? 0) });
console.log(`listening ${(app.server.address() as { port: number }).port}`);
