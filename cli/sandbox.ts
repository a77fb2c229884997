import { DIFFERENCES, READINGS, STRICT_READINGS } from '../core/profiles.ts';
import { PRODUCTS } from '../core/products.ts';
import { DEVELOPMENT_KEYS, SettingsError, helpText, resolveSettingsWith, sandboxOptions, wantsHelp } from '../sandbox/domain/settings.ts';
import { startSandbox } from '../sandbox/start.ts';
import { chaosPlugins, chaosText } from '../sandbox/chaos/chaos.ts';
import { chaosSummary, hasChaos } from '../sandbox/domain/chaos-conditions.ts';
import { CLIENT_REPORT_ROUTES, ClientReport } from '../sandbox/client-report/client-report.ts';
import { LIST_CLIENT_RULES_SETTING, clientRulesTable } from '../sandbox/client-report/rules-table.ts';
import { DEVIATIONS_SETTING, LIST_DEVIATIONS_SETTING, faultNamesOf, faultPlugins, faultsText } from '../sandbox-quality/faults/faults.ts';
import type { SandboxPlugin } from '../sandbox/domain/plugins.ts';
import { LIST_VARIATIONS_SETTING, VARIATIONS_SETTING, variationPlugins, variationsText } from '../sandbox-quality/variations/variations.ts';

const EXTRAS = [DEVIATIONS_SETTING, LIST_DEVIATIONS_SETTING, VARIATIONS_SETTING, LIST_VARIATIONS_SETTING, LIST_CLIENT_RULES_SETTING];

export const options = sandboxOptions(EXTRAS);

type Resolved = ReturnType<typeof resolveSettingsWith>;
type Running = Awaited<ReturnType<typeof startSandbox>>;

/** `momo-harness sandbox` (npm run sandbox): the reference sandbox, configured by flags and environment. */
export default async function sandbox(argv: string[]): Promise<number> {
  const listing = listingAsked(argv);
  if (listing !== undefined) {
    console.log(listing);
    return 0;
  }
  let configured;
  try {
    configured = configure(argv);
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    console.error(error.message);
    return 2;
  }
  if (typeof configured === 'string') {
    console.log(configured);
    return 0;
  }
  const running = await start(configured);
  if (running === undefined) return 2;
  tellHowToUse(configured, running);
  return serveUntilStopped(running);
}

/** The text of --help, --differences or --chaos, when asked for one. */
function listingAsked(argv: string[]): string | undefined {
  const wanted = wantsHelp(argv);
  if (wanted === 'help')
    return helpText(
      [DEVIATIONS_SETTING, VARIATIONS_SETTING],
      [
        '       momo-harness sandbox --list-deviations    (deliberate non-conformances to start it with)',
        '       momo-harness sandbox --list-variations    (conforming variations: answers the spec allows, to start it with)',
        '       momo-harness sandbox --list-client-rules  (the rules the client report, --client-report, holds each client to)',
      ],
    );
  if (wanted === 'differences') return describeProfiles();
  if (wanted === 'chaos') return chaosText();
  return undefined;
}

/** The settings and the plugins they name; or the text of a --list-… flag. Throws SettingsError, saying what to fix. */
function configure(argv: string[]): string | { resolved: Resolved; plugins: SandboxPlugin[]; variations: SandboxPlugin[] } {
  const resolved = resolveSettingsWith({ argv, env: process.env }, EXTRAS);
  if (resolved.extras['list-deviations'] === true) return faultsText();
  if (resolved.extras['list-variations'] === true) return variationsText();
  if (resolved.extras['list-client-rules'] === true) return clientRulesTable();
  let plugins: SandboxPlugin[];
  try {
    plugins = faultPlugins(faultNamesOf(String(resolved.extras.deviations)));
  } catch (error) {
    throw new SettingsError([`--deviations (MOMO_SANDBOX_DEVIATIONS) names ${(error as Error).message.replace(/^"/, '"')}`]);
  }
  try {
    return { resolved, plugins, variations: variationPlugins(faultNamesOf(String(resolved.extras.variations))) };
  } catch (error) {
    throw new SettingsError([`--variations (MOMO_SANDBOX_VARIATIONS) names ${(error as Error).message}`]);
  }
}

/** The sandbox listening, chaos first; undefined, said on stderr, when it cannot start. */
async function start({ resolved: { settings }, plugins, variations }: Exclude<ReturnType<typeof configure>, string>) {
  try {
    // The client report is made here so that chaos can tell it what it applied (sandbox/domain/chaos-applied.ts).
    const clientReport = settings.clientReport === undefined ? undefined : new ClientReport(settings.clientReport);
    // Chaos first: its hooks see each answer before a variation or a deviation rewrites it.
    const chaos = chaosPlugins(settings, clientReport?.chaosApplied);
    return await startSandbox(settings, { ...(clientReport ? { clientReport } : {}), plugins: [...chaos, ...variations, ...plugins] });
  } catch (error) {
    const message = (error as Error).message;
    console.error(
      /listen|EADDR|EACCES/.test(message) || (error as { code?: string }).code?.startsWith('EADDR')
        ? `Cannot listen on ${settings.host}:${settings.port}: ${message}. Choose another with --port or PORT.`
        : `Cannot start the sandbox: ${message}`,
    );
    return undefined;
  }
}

/** Where it listens, its keys (the public ones only), what it was started with, and its documents. */
function tellHowToUse(
  { resolved: { settings }, plugins, variations }: Exclude<ReturnType<typeof configure>, string>,
  running: Running,
): void {
  const { baseUrl } = running;
  console.log(`MoMo reference sandbox (profile ${settings.profile}${settings.strict ? ', strict' : ''}) on ${baseUrl}`);
  console.log('Subscription keys (Ocp-Apim-Subscription-Key):');
  for (const product of PRODUCTS) {
    const key = settings.subscriptionKeys[product];
    // The development keys are public; a configured key is a secret and is never printed.
    console.log(`  ${product.padEnd(12)} ${key === DEVELOPMENT_KEYS[product] ? key : '(configured; not shown)'}`);
  }
  if (plugins.length > 0)
    console.log(
      `DELIBERATELY NON-CONFORMING: ${plugins.map((p) => p.name).join(', ')} (--deviations); do not certify against this sandbox.`,
    );
  if (variations.length > 0) console.log(`With conforming variations: ${variations.map((p) => p.name).join(', ')} (--variations).`);
  if (hasChaos(settings.chaos))
    console.log(
      `With spec-legal chaos: ${chaosSummary(settings.chaos)} (--chaos; seed ${settings.chaosSeed}, --chaos-seed ${settings.chaosSeed} repeats it).`,
    );
  const { data, clientReport } = running.sandbox;
  if (data) {
    const { apiUsers, transactions, resumed, consents } = data.recovered;
    console.log(
      `State kept in ${data.path}: ${apiUsers} API users, ${transactions} transactions (${resumed} pending, resumed) and ${consents} consents read back.`,
    );
  }
  console.log(`OpenAPI: ${baseUrl}/openapi.json   health: ${baseUrl}/health`);
  if (clientReport)
    console.log(
      `Client report: ${clientReport.dir}, written when the sandbox stops and on POST ${baseUrl}${CLIENT_REPORT_ROUTES.write} (GET ${baseUrl}${CLIENT_REPORT_ROUTES.read} for the JSON)`,
    );
}

/** Serves until SIGINT or SIGTERM, or until its state cannot be kept; the exit code. */
async function serveUntilStopped(running: Running): Promise<number> {
  const { data, clientReport } = running.sandbox;
  const failure = await new Promise<Error | undefined>((resolve) => {
    const stop = () => resolve(undefined);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    void data?.failure.then(resolve);
  });
  await running.close();
  if (failure) {
    console.error(`${failure.message}; stopped, so that no answer tells of a change that is not kept.`);
    return 2;
  }
  if (clientReport?.closingError) {
    console.error(`The client report could not be written to ${clientReport.dir}: ${clientReport.closingError.message}`);
    return 2;
  }
  if (clientReport) console.log(`Client report written to ${clientReport.dir}`);
  return 0;
}

function describeProfiles(): string {
  const lines = ['Where the profiles differ (spec → mtn-sandbox):', ''];
  for (const [key, d] of Object.entries(DIFFERENCES)) {
    lines.push(`- ${key}: ${JSON.stringify(d.spec)} → ${JSON.stringify(d['mtn-sandbox'])}`, `    ${d.explanation}`);
  }
  lines.push('', 'Readings both profiles share:', '', ...READINGS.map((r) => `- ${r}`));
  lines.push('', 'Strict readings, refused only with --strict (MOMO_SANDBOX_STRICT=true):', '');
  for (const [name, reading] of Object.entries(STRICT_READINGS)) lines.push(`- ${name}: ${reading.refuses}`, `    ${reading.reason}`);
  return lines.join('\n');
}
