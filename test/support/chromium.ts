import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The Chromium on PATH (Debian's chromium; scripts/ensure-chromium.sh installs it), if there is one. */
export function chromiumOnPath(): string | undefined {
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    for (const name of ['chromium', 'chromium-browser']) if (existsSync(join(folder, name))) return join(folder, name);
  }
  return undefined;
}
