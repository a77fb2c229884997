import { randomBytes } from 'node:crypto';
import type { SandboxContext } from '../domain/context.ts';
import type { RouteHandlers } from '../http/serving.ts';
import { sendBusinessError } from '../http/replies.ts';
import { idKey } from '../domain/state.ts';

const NOT_FOUND = 'Requested resource was not found.';

/** Sandbox user provisioning (§4.5): API users and their keys. */
export function provisioningHandlers({
  state,
  settings,
}: SandboxContext): Pick<RouteHandlers, 'createApiUser' | 'createApiKey' | 'getApiUser'> {
  return {
    createApiUser: () => async (request, reply) => {
      const id = idKey(request.headers['x-reference-id']);
      if (state.apiUsers.has(id))
        return sendBusinessError(reply, 409, 'RESOURCE_ALREADY_EXIST', 'Duplicated reference id. Creation of resource failed.');
      const { providerCallbackHost } = request.body;
      const user = { id, product: request.keyProduct, providerCallbackHost, targetEnvironment: settings.targetEnvironments[0]! };
      state.apiUsers.add(id, user);
      state.journal?.apiUser(user);
      return reply.code(201).send();
    },

    createApiKey: () => async (request, reply) => {
      const user = state.apiUsers.get(idKey(request.params.referenceId));
      if (!user) return sendBusinessError(reply, 404, 'RESOURCE_NOT_FOUND', NOT_FOUND);
      user.apiKey = randomBytes(16).toString('hex');
      state.journal?.apiUser(user);
      return reply.code(201).send({ apiKey: user.apiKey });
    },

    getApiUser: () => async (request, reply) => {
      const user = state.apiUsers.get(idKey(request.params.referenceId));
      if (!user) return sendBusinessError(reply, 404, 'RESOURCE_NOT_FOUND', NOT_FOUND);
      return reply.send({ providerCallbackHost: user.providerCallbackHost, targetEnvironment: user.targetEnvironment });
    },
  };
}
