/**
 * The option tables of docs/reference.md, written from the options each command declares (core/command-line.ts),
 * so that the page cannot drift from what the commands take. Each table stands between its markers,
 * `<!-- options:<command>:begin -->` and `<!-- options:<command>:end -->`, where <command> is a subcommand of
 * momo-harness (run, sandbox, …; cli/commands.ts) or an npm script with options of its own (fuzz, mutation,
 * benchmark; sandbox-quality/script-options.ts); the prose around them is left as it is (withOptionTables).
 *
 *   npm run generate:reference            # rewrites the tables
 *   npm run generate:reference -- --check # exits 1 when the file is not what the declarations give (a test runs this)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { subcommandOptions } from '../cli/commands.ts';
import { withOptionTables } from '../core/command-help.ts';
import { SCRIPT_OPTIONS } from '../sandbox-quality/script-options.ts';

const REFERENCE = fileURLToPath(new URL('../docs/reference.md', import.meta.url));

const current = readFileSync(REFERENCE, 'utf8');
const text = withOptionTables(current, { ...(await subcommandOptions()), ...SCRIPT_OPTIONS });
if (process.argv.includes('--check')) {
  if (current !== text) {
    console.error("docs/reference.md's option tables are not what the commands declare: run npm run generate:reference");
    process.exit(1);
  }
} else {
  writeFileSync(REFERENCE, text);
  console.log('Wrote the option tables of docs/reference.md');
}
