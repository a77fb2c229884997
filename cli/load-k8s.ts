import { main } from '../load/runner/k8s.ts';

export { K8S_OPTIONS as options } from '../load/runner/k8s.ts';

/** `momo-harness load-k8s <scenario>`: the k6-operator manifests of a scenario. */
export default function loadK8s(argv: string[]): Promise<number> {
  return main(argv);
}
