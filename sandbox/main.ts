import { buildSandbox } from './app.ts';
import { DIFFERENCES, READINGS } from '../core/profiles.ts';
import { DEVELOPMENT_KEYS, SettingsError, helpText, resolveSettings, wantsHelp } from './settings.ts';
import { PRODUCTS } from '../core/products.ts';
import { deviationsText } from '../sandbox-quality/faults/faults.ts';

/** `npm run sandbox`: the reference sandbox on 127.0.0.1, configured by flags and environment. */
async function main(argv: string[]): Promise<number> {
  const wanted = wantsHelp(argv);
  if (wanted === 'help') {
    console.log(helpText());
    return 0;
  }
  if (wanted === 'differences') {
    console.log(describeProfiles());
    return 0;
  }
  if (wanted === 'deviations') {
    console.log(deviationsText());
    return 0;
  }
  let settings;
  try {
    settings = resolveSettings({ argv, env: process.env });
  } catch (error) {
    if (error instanceof SettingsError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }
  let sandbox;
  try {
    sandbox = await buildSandbox(settings);
  } catch (error) {
    console.error(`Cannot start the sandbox: ${(error as Error).message}`);
    return 2;
  }
  try {
    await sandbox.app.listen({ host: settings.host, port: settings.port });
  } catch (error) {
    console.error(`Cannot listen on ${settings.host}:${settings.port}: ${(error as Error).message}. Choose another with --port or PORT.`);
    await sandbox.close();
    return 2;
  }
  const address = sandbox.app.server.address();
  const port = typeof address === 'object' && address ? address.port : settings.port;
  console.log(`MoMo reference sandbox (profile ${settings.profile}) on http://${settings.host}:${port}`);
  console.log('Subscription keys (Ocp-Apim-Subscription-Key):');
  for (const product of PRODUCTS) {
    const key = settings.subscriptionKeys[product];
    // The development keys are public; a configured key is a secret and is never printed.
    console.log(`  ${product.padEnd(12)} ${key === DEVELOPMENT_KEYS[product] ? key : '(configured; not shown)'}`);
  }
  if (settings.deviations.length > 0) {
    console.log(`DELIBERATELY NON-CONFORMING: ${settings.deviations.join(', ')} (--deviations); do not certify against this sandbox.`);
  }
  console.log(`OpenAPI: http://${settings.host}:${port}/openapi.json   health: http://${settings.host}:${port}/health`);

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await sandbox.close();
  return 0;
}

function describeProfiles(): string {
  const lines = ['Where the profiles differ (spec → mtn-sandbox):', ''];
  for (const [key, d] of Object.entries(DIFFERENCES)) {
    lines.push(`- ${key}: ${JSON.stringify(d.spec)} → ${JSON.stringify(d['mtn-sandbox'])}`, `    ${d.explanation}`);
  }
  lines.push('', 'Readings both profiles share:', '', ...READINGS.map((r) => `- ${r}`));
  return lines.join('\n');
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`The sandbox stopped on an unexpected error: ${(error as Error).message}`);
    process.exit(1);
  },
);
