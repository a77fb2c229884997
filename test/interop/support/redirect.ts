import http from 'node:http';
import https from 'node:https';

/**
 * Sends the requests a client makes to one host to another server instead: the one change the interop suite
 * makes to a client that hard-codes where it sends requests (https://sandbox.momodeveloper.mtn.com). Requests
 * made through node:http and node:https (which axios, request and node-fetch's Node builds all use) to `from`
 * go, as plain HTTP, to `to`; every other request goes where it was going. The returned function undoes it.
 */
export function redirectHost(from: string, to: string): () => void {
  const target = new URL(to);
  const original = { httpsRequest: https.request, httpsGet: https.get, httpRequest: http.request, httpGet: http.get };

  const rewrite = (args: unknown[]): unknown[] | undefined => {
    const [first, second] = args;
    const url = first instanceof URL ? first : typeof first === 'string' ? new URL(first) : undefined;
    const options = (
      url ? (typeof second === 'object' && second !== null && typeof second !== 'function' ? second : {}) : first
    ) as http.RequestOptions & { href?: string };
    const host = url?.hostname ?? options.hostname ?? options.host?.split(':')[0];
    if (host !== from) return undefined;
    const path = url ? `${url.pathname}${url.search}` : (options.path ?? '/');
    // The client's own agent speaks TLS to the real host; the redirected request needs a plain one.
    const { agent: _agent, protocol: _protocol, ...rest } = (url ? options : options) as http.RequestOptions;
    const redirected: http.RequestOptions = {
      ...rest,
      protocol: 'http:',
      hostname: target.hostname,
      host: target.hostname,
      port: Number(target.port),
      path,
      headers: { ...(rest.headers as http.OutgoingHttpHeaders | undefined), host: `${target.hostname}:${target.port}` },
    };
    const callback = args.find((a) => typeof a === 'function');
    return callback ? [redirected, callback] : [redirected];
  };

  const wrap = (plain: typeof http.request) =>
    ((...args: unknown[]) => {
      const redirected = rewrite(args);
      return (plain as (...a: unknown[]) => http.ClientRequest)(...(redirected ?? args));
    }) as typeof http.request;

  https.request = ((...args: unknown[]) => {
    const redirected = rewrite(args);
    return redirected
      ? (original.httpRequest as (...a: unknown[]) => http.ClientRequest)(...redirected)
      : (original.httpsRequest as (...a: unknown[]) => http.ClientRequest)(...args);
  }) as typeof https.request;
  https.get = ((...args: unknown[]) => {
    const request = (https.request as (...a: unknown[]) => http.ClientRequest)(...args);
    request.end();
    return request;
  }) as typeof https.get;
  http.request = wrap(original.httpRequest);
  http.get = ((...args: unknown[]) => {
    const request = (http.request as (...a: unknown[]) => http.ClientRequest)(...args);
    request.end();
    return request;
  }) as typeof http.get;

  return () =>
    Object.assign(https, { request: original.httpsRequest, get: original.httpsGet }) &&
    Object.assign(http, { request: original.httpRequest, get: original.httpGet }) &&
    undefined;
}
