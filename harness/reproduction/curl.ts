import type { Exchange } from '../client/momo-client.ts';
import { secretVariablesOf } from '../config.ts';
import { REDACTED } from '../../core/secrets/redact.ts';
import { SUBSCRIPTION_KEY_HEADER } from '../../core/catalogue/headers.ts';

/**
 * An exchange of the evidence as a shell command that sends the same request again: the curl command a failure
 * report carries. The evidence is redacted, so each secret it shows as [REDACTED] becomes a reference to the
 * environment variable that holds it (harness/config.ts secretVariablesOf, the names .env.example lists), never
 * a value: the subscription key of the product it was of, an API user's id and key for Basic, and for an access
 * token a command that fetches one first. Everything else is the evidence's own text, which the target may
 * have chosen (an echoed header, say), so it goes into single quotes: nothing in it can run in a shell.
 */

/** The variable a reproduction reads a bearer token from, when it fetches one or the user must give one. */
export const TOKEN_VARIABLE = 'MOMO_TOKEN';

/** The variable a reproduction reads a Basic credential from when the run's was none of its API users'. */
export const BASIC_VARIABLE = 'MOMO_BASIC_CREDENTIAL';

/** The command that reproduces an exchange, or undefined when the evidence does not hold its request (budget spent). */
export function curlOf(exchange: Exchange): string | undefined {
  if (exchange.omitted !== undefined) return undefined;
  const { request, credentials } = exchange;
  const lines: string[] = [];
  const args: string[] = ['curl', '-sS', '-i', '-X', quote(request.method)];
  for (const [name, value] of Object.entries(request.headers)) {
    const lower = name.toLowerCase();
    if (value.includes(REDACTED) && lower === SUBSCRIPTION_KEY_HEADER.toLowerCase()) {
      const variable = credentials?.subscriptionKey ? secretVariablesOf(credentials.subscriptionKey).subscriptionKey : undefined;
      if (variable === undefined) lines.push(`# ${name}: a subscription key the evidence does not name; set MOMO_SUBSCRIPTION_KEY to it`);
      args.push('-H', `${quote(`${name}: `)}"$${variable ?? 'MOMO_SUBSCRIPTION_KEY'}"`);
    } else if (value.includes(REDACTED) && lower === 'authorization') {
      args.push(...authorization(name, value, exchange, lines));
    } else {
      if (value.includes(REDACTED)) lines.push(`# ${reportLine(name)}: the run's value is redacted; put the real one in its place`);
      args.push('-H', quote(`${name}: ${value}`));
    }
  }
  if (request.body !== undefined) {
    if (request.bodyCut) lines.push('# the request body is cut in the evidence: this sends the part it kept');
    if (request.body.includes(REDACTED)) lines.push('# the request body holds a redacted secret: put the real one in its place');
    args.push('--data-binary', quote(request.body));
  }
  args.push(quote(request.url));
  return [...lines, args.join(' ')].join('\n');
}

/** Authorization as variables: Basic from an API user's id and key, Bearer from a token fetched first or given. */
function authorization(name: string, value: string, exchange: Exchange, lines: string[]): string[] {
  const credentials = exchange.credentials;
  if (credentials?.basic) {
    const { userId, apiKey } = secretVariablesOf(credentials.basic);
    return ['-u', `"$${userId}:$${apiKey}"`];
  }
  if (credentials?.otherBasic) {
    lines.push(
      `# ${BASIC_VARIABLE}: the run sent the credential of no API user of its own (a wrong key, say), redacted; set ${BASIC_VARIABLE} to such a one (base64 of <user id>:<key>)`,
    );
    return ['-H', `${quote(`${name}: Basic `)}"$${BASIC_VARIABLE}"`];
  }
  if (credentials?.accessToken) {
    const { product, tokenUrl } = credentials.accessToken;
    const names = secretVariablesOf(product);
    lines.push(
      `# an access token of the ${product} API user that ${names.userId} and ${names.apiKey} name`,
      `${TOKEN_VARIABLE}=$(curl -sS -X POST -u "$${names.userId}:$${names.apiKey}" -H ${quote(`${SUBSCRIPTION_KEY_HEADER}: `)}"$${names.subscriptionKey}" ${quote(tokenUrl)} | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).access_token')`,
    );
  } else {
    lines.push(
      `# ${TOKEN_VARIABLE}: the token the run sent is redacted, and fetching one for the API user would not give its like (a consent token, or one the scenario made); set ${TOKEN_VARIABLE} to one of its kind`,
    );
  }
  const scheme = value.split(' ')[0] ?? 'Bearer';
  return ['-H', `${quote(`${name}: ${scheme} `)}"$${TOKEN_VARIABLE}"`];
}

/** A word for a POSIX shell: in single quotes, each ' written as '\'' (end the quote, an escaped quote, reopen). */
export function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A comment line holds no line break, whatever a header name holds. */
function reportLine(text: string): string {
  return text.replace(/[\r\n]/g, ' ');
}
