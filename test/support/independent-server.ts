/** The independent servers, as the tests start them (sandbox-quality/independent/servers.ts says what they are). */
export {
  INDEPENDENT_SERVERS,
  independentTargetEnv,
  startIndependentServer,
  switchesOf,
  type IndependentServer,
  type IndependentServerName,
} from '../../sandbox-quality/independent/servers.ts';
