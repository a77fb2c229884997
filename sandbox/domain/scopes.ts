/**
 * The scope parameter of bc-authorize (§4.2 #7), read one way for the handler that checks it and for the OpenAPI
 * document that states it: words separated by spaces (RFC 6749 §3.3), each one of the scopes this sandbox offers
 * (--scopes), at least one.
 */

/** The scopes a scope parameter names: its words, however many spaces separate them. */
export function scopesNamed(scope: string): string[] {
  return scope.split(' ').filter(Boolean);
}

/**
 * The pattern of a scope parameter that names at least one scope and only offered ones: what bc-authorize takes,
 * where it answers any other MISSING_SCOPE_INSTRUCTION or UNSUPPORTED_SCOPE.
 */
export function offeredScopesPattern(offered: readonly string[]): string {
  // Only the characters that the unicode mode of JSON Schema's patterns lets be escaped.
  const scope = `(?:${offered.map((s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})`;
  return `^ *${scope}(?: +${scope})* *$`;
}
