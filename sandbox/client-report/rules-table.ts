import type { ExtraSetting } from '../domain/settings.ts';
import { describeRuleSource, RULES } from './rules.ts';

/** `momo-harness sandbox --list-client-rules`: prints the rules table below and exits. */
export const LIST_CLIENT_RULES_SETTING: ExtraSetting = {
  flag: 'list-client-rules',
  type: 'boolean',
  fallback: '',
  describe: 'Lists the rules the client report (--client-report) holds each client to, with their sources.',
};

/**
 * Every rule of the client report as a Markdown table: what --list-client-rules prints, and what docs/sandbox.md
 * shows (test/docs/client-report-rules.test.ts holds the two equal), so the rules are written once, in rules.ts.
 */
export function clientRulesTable(): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  return [
    '| rule | what it holds a client to | severity | source | fix |',
    '|---|---|---|---|---|',
    ...RULES.map(
      (rule) =>
        `| \`${rule.id}\` | ${cell(rule.title)} | ${rule.severity}${rule.stake ? `, ${rule.stake} at stake` : ''} | ${cell(describeRuleSource(rule.source))} | ${cell(rule.fix)} |`,
    ),
  ].join('\n');
}
