import { Counter, Trend } from 'k6/metrics';

// Every custom metric carries the momo_ prefix, so it stands apart from k6's own in summaries and dashboards.

/** Token requests made, to set against creations (http_req_failed{op:...}): caching works when this stays far below them. */
export const tokenRequests = new Counter('momo_token_requests');
/** 401 answers to calls made with a cached token: a token that expired in use, or a server that refused a valid one. */
export const unexpected401 = new Counter('momo_unexpected_401');
/** Transactions accepted (202) whose status could never be read: lost by the server. */
export const lostTransactions = new Counter('momo_lost_transactions');
/** Time from the 202 to the first final status read back (polling). */
export const timeToFinal = new Trend('momo_time_to_final', true);
/** Answers whose body departs from its JSON Schema; every body is validated (load/lib/checks.ts). */
export const schemaViolations = new Counter('momo_schema_violations');
/** Calls whose status was not the one the operation documents for the case (the error rate is k6's http_req_failed). */
export const unexpectedAnswers = new Counter('momo_unexpected_answers');
