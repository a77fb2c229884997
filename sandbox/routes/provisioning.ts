import { randomBytes } from 'node:crypto';
import { schemaId } from '../../core/schemas.ts';
import type { SandboxContext } from '../app.ts';
import { sendBusinessError } from '../http.ts';
import { idKey } from '../state.ts';

const referenceIdParam = { referenceId: { $ref: schemaId('uuid-v4') } };
const NOT_FOUND = 'Requested resource was not found.';

/** Sandbox user provisioning (§4.5): API users and their keys. */
export function registerProvisioning({ catalogue, state, settings, deviations }: SandboxContext): void {
  catalogue.define({
    id: 'provisioning.createApiUser',
    summary: 'Create an API user',
    specSection: '§4.5 #14',
    method: 'POST',
    url: '/v1_0/apiuser',
    product: 'provisioning',
    credential: 'none',
    requiredHeaders: ['x-reference-id'],
    body: { schema: 'api-user-create', mediaType: 'application/json' },
    responses: {
      201: { description: 'Created; no body.' },
      400: { description: 'Invalid data.', schema: 'bad-request' },
      409: { description: 'Duplicated reference id: RESOURCE_ALREADY_EXIST.', schema: 'error-set-c' },
      503: { description: 'The sandbox holds its maximum of API users (--max-api-users): SERVICE_UNAVAILABLE, a code of set A (set C has none for it).', schema: 'error-set-a' },
    },
  }, async (request, reply) => {
    const id = idKey(request.headers['x-reference-id'] as string);
    if (state.apiUsers.has(id) && deviations.has('api-user-id-reused')) {
      state.apiUsers.delete(id);
    } else if (state.apiUsers.has(id)) {
      return sendBusinessError(reply, 409, 'RESOURCE_ALREADY_EXIST', 'Duplicated reference id. Creation of resource failed.');
    }
    const { providerCallbackHost } = request.body as { providerCallbackHost: string };
    state.apiUsers.add(id, {
      id,
      product: request.keyProduct!,
      providerCallbackHost,
      targetEnvironment: settings.targetEnvironments[0]!,
    });
    return reply.code(201).send();
  });

  catalogue.define({
    id: 'provisioning.createApiKey',
    summary: 'Create an API key',
    specSection: '§4.5 #15',
    method: 'POST',
    url: '/v1_0/apiuser/:referenceId/apikey',
    product: 'provisioning',
    credential: 'none',
    params: referenceIdParam,
    noBody: true,
    responses: {
      201: { description: 'The new key; it replaces any earlier key of the user.', schema: 'api-key' },
      400: { description: 'Invalid data.', schema: 'bad-request' },
      404: { description: 'Unknown API user: RESOURCE_NOT_FOUND.', schema: 'error-set-c' },
    },
  }, async (request, reply) => {
    const user = state.apiUsers.get(idKey((request.params as { referenceId: string }).referenceId));
    if (!user) return sendBusinessError(reply, 404, 'RESOURCE_NOT_FOUND', NOT_FOUND);
    user.apiKey = randomBytes(16).toString('hex');
    return reply.code(201).send({ apiKey: user.apiKey });
  });

  catalogue.define({
    id: 'provisioning.getApiUser',
    summary: 'Get API user information',
    specSection: '§4.5 #16',
    method: 'GET',
    url: '/v1_0/apiuser/:referenceId',
    product: 'provisioning',
    credential: 'none',
    params: referenceIdParam,
    noBody: true,
    responses: {
      200: { description: 'The API user.', schema: 'api-user' },
      400: { description: 'Invalid data.', schema: 'bad-request' },
      404: { description: 'Unknown API user: RESOURCE_NOT_FOUND.', schema: 'error-set-c' },
    },
  }, async (request, reply) => {
    const user = state.apiUsers.get(idKey((request.params as { referenceId: string }).referenceId));
    if (!user) return sendBusinessError(reply, 404, 'RESOURCE_NOT_FOUND', NOT_FOUND);
    return reply.send({ providerCallbackHost: user.providerCallbackHost, targetEnvironment: user.targetEnvironment });
  });
}
