import type { Exchange } from '../client/momo-client.ts';

/**
 * A scenario's exchanges as a HAR 1.2 log (http://www.softwareishard.com/blog/har-12-spec/), which browser
 * devtools open (the Network panel's import) and HTTP tools replay. It is made from the evidence, so it is
 * redacted as the evidence is. What the evidence does not hold whole is said in a `comment`, as HAR provides:
 * a body cut at 32 KiB, an exchange the run's budget omitted, a call that got no answer (status 0, as devtools
 * show a failed request). schemas/har.schema.json describes the file; a test holds every file the run writes to it.
 */

export interface Har {
  log: {
    version: '1.2';
    creator: { name: string; version: string };
    pages: HarPage[];
    entries: HarEntry[];
    comment?: string;
  };
}

interface HarPage {
  startedDateTime: string;
  id: string;
  title: string;
  pageTimings: { onContentLoad: number; onLoad: number };
}

interface NameValue {
  name: string;
  value: string;
}

interface HarEntry {
  pageref: string;
  startedDateTime: string;
  time: number;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    cookies: NameValue[];
    headers: NameValue[];
    queryString: NameValue[];
    postData?: { mimeType: string; text: string; comment?: string };
    headersSize: number;
    bodySize: number;
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    cookies: NameValue[];
    headers: NameValue[];
    content: { size: number; mimeType: string; text?: string; comment?: string };
    redirectURL: string;
    headersSize: number;
    bodySize: number;
    comment?: string;
  };
  cache: Record<string, never>;
  timings: { send: number; wait: number; receive: number };
  comment?: string;
}

export interface HarScenario {
  /** The page title devtools show: the feature and the scenario. */
  title: string;
  exchanges: readonly Exchange[];
}

/** `fallbackStart`: when an exchange does not say when it started (evidence of an older run), the run's time. */
export function harOf(scenario: HarScenario, creator: { name: string; version: string }, fallbackStart: string): Har {
  const pageId = 'scenario';
  const started = scenario.exchanges.find((e) => e.startedAt)?.startedAt ?? fallbackStart;
  return {
    log: {
      version: '1.2',
      creator,
      pages: [{ startedDateTime: started, id: pageId, title: scenario.title, pageTimings: { onContentLoad: -1, onLoad: -1 } }],
      entries: scenario.exchanges.map((exchange) => entryOf(exchange, pageId, exchange.startedAt ?? started)),
      comment: 'Redacted: subscription keys, API keys, credentials and tokens show as [REDACTED].',
    },
  };
}

function entryOf(exchange: Exchange, pageref: string, startedDateTime: string): HarEntry {
  const { request, response } = exchange;
  const url = new URL(request.url);
  const contentType = (headers: Record<string, string>) =>
    Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
  const time = response?.durationMs ?? 0;
  const noAnswer = exchange.omitted ?? (exchange.transportError !== undefined ? `no response: ${exchange.transportError}` : undefined);
  return {
    pageref,
    startedDateTime,
    time,
    request: {
      method: request.method,
      url: request.url,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: nameValues(request.headers),
      queryString: [...url.searchParams].map(([name, value]) => ({ name, value })),
      ...(request.body !== undefined
        ? {
            postData: {
              mimeType: contentType(request.headers) ?? '',
              text: request.body,
              ...(request.bodyCut ? { comment: cutNote(request.bodyCut) } : {}),
            },
          }
        : {}),
      headersSize: -1,
      bodySize: request.bodyCut?.bytes ?? (request.body !== undefined ? Buffer.byteLength(request.body) : 0),
    },
    response: response
      ? {
          status: response.status,
          statusText: '',
          httpVersion: 'HTTP/1.1',
          cookies: [],
          headers: nameValues(response.headers),
          content: {
            size: response.bodyCut?.bytes ?? Buffer.byteLength(response.body),
            mimeType: contentType(response.headers) ?? '',
            text: response.body,
            ...(response.bodyCut ? { comment: cutNote(response.bodyCut) } : {}),
          },
          redirectURL: '',
          headersSize: -1,
          bodySize: response.bodyCut?.bytes ?? Buffer.byteLength(response.body),
        }
      : {
          status: 0,
          statusText: '',
          httpVersion: '',
          cookies: [],
          headers: [],
          content: { size: 0, mimeType: '' },
          redirectURL: '',
          headersSize: -1,
          bodySize: -1,
          comment: noAnswer ?? 'no response',
        },
    cache: {},
    timings: { send: 0, wait: time, receive: 0 },
    comment: exchange.operation + (noAnswer ? `: ${noAnswer}` : ''),
  };
}

function nameValues(headers: Record<string, string>): NameValue[] {
  return Object.entries(headers).map(([name, value]) => ({ name, value }));
}

function cutNote(cut: NonNullable<Exchange['request']['bodyCut']>): string {
  const exceeded =
    cut.exceededLimit !== undefined
      ? `; the body exceeded ${cut.exceededLimit} bytes (MOMO_MAX_RESPONSE_BYTES) and was read no further`
      : '';
  return `truncated: the evidence keeps ${cut.keptCharacters} of ${cut.characters} characters (${cut.bytes} bytes)${exceeded}`;
}
