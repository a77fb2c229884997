// Loaded into a process with NODE_OPTIONS=--import=<this file> (test/support/suite.ts runSuiteMeasured): when the
// process exits, it writes its peak resident set size (getrusage's maxrss, in bytes) to <PEAK_RSS_DIR>/<pid>, so
// that a test can bound the memory of a whole run, every worker process included. It changes nothing else.
// Plain JavaScript: NODE_OPTIONS loads it before the command line's --import tsx.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.PEAK_RSS_DIR;
if (dir) process.on('exit', () => writeFileSync(join(dir, String(process.pid)), String(process.resourceUsage().maxRSS * 1024)));
