import momo from 'mtn-momo';
import { sparkplugClient } from './sparkplug.ts';

export const client = sparkplugClient('mtn-momo', momo);
