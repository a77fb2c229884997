import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPTS = fileURLToPath(new URL('../../scripts/', import.meta.url));

/**
 * Runs an ensure-*.sh script (scripts/go-tool.sh) on a machine as it would be without the tool and without Go:
 * a copy of the project's scripts alone, with nothing in .tools/, and a PATH of the system's own folders.
 */
export function ensureWithoutGo(script: string): SpawnSyncReturns<string> {
  const root = mkdtempSync(join(tmpdir(), 'momo-no-go-'));
  mkdirSync(join(root, 'scripts'));
  for (const file of [script, 'go-tool.sh']) copyFileSync(join(SCRIPTS, file), join(root, 'scripts', file));
  return spawnSync('bash', [join(root, 'scripts', script)], { env: { PATH: '/usr/bin:/bin' }, encoding: 'utf8' });
}
