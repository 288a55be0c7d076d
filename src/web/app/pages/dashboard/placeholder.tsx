import { Empty } from '../../components/states';

/** Stands in for a dashboard section not built yet. */
export function Placeholder() {
  return (
    <Empty title="Coming soon">
      This part of the dashboard is not built yet. Meanwhile the <a href="/docs">API</a> and the <code>market</code> command do
      it.
    </Empty>
  );
}
