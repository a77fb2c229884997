import type { SandboxContext } from '../domain/context.ts';
import type { RouteHandlers } from '../http/serving.ts';

/** Access tokens (§4.2 #1), one operation per product as the live service has them; the guards checked the Basic credential. */
export function accessTokenHandlers(context: SandboxContext): Pick<RouteHandlers, 'createAccessToken'> {
  const { settings, profile, tokens } = context;
  return {
    createAccessToken: (product) => async (request, reply) => {
      const user = request.caller;
      const accessToken = tokens.issue({ sub: user.id, prd: product!, use: 'access' }, settings.tokenLifetimeSeconds);
      reply.header('cache-control', 'no-store');
      return reply.send({ access_token: accessToken, token_type: profile.tokenType, expires_in: settings.tokenLifetimeSeconds });
    },
  };
}
