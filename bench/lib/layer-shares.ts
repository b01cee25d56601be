/** One answer to a publish as the client saw it: how long it took, and the API's own account of it, if any. */
export interface TimedAnswer {
  clientMs: number;
  serverTiming: string | null;
}

const round = (n: number) => Math.round(n * 100) / 100;

/** `auth;dur=0.41, …` (lib/runtime/request-timing.ts) as milliseconds by layer. */
function layersOf(header: string): Record<string, number> {
  const layers: Record<string, number> = {};
  for (const part of header.split(',')) {
    const m = /^\s*([a-z_]+);dur=([\d.]+)\s*$/.exec(part);
    if (m) layers[m[1]!] = Number(m[2]);
  }
  return layers;
}

/**
 * Where the slowest 1 % of requests (by the client's time) spent it, layer by layer: each layer's mean over
 * them, its share of their mean client time, and its mean over every request for contrast. `outside` is the
 * client's time less the API's `total`: the socket, the HTTP parser and the wait for the event loop. Undefined
 * when the API sent no timing (a release without API_REQUEST_TIMING, Svix, or the setting off).
 */
export function slowestLayers(answers: readonly TimedAnswer[], fraction = 0.01) {
  const timed = answers.filter((a) => a.serverTiming).map((a) => ({ ...a, layers: layersOf(a.serverTiming!) }));
  if (!timed.length) return undefined;
  for (const t of timed) t.layers.outside = Math.max(0, t.clientMs - (t.layers.total ?? 0));
  const slowest = [...timed]
    .sort((a, b) => b.clientMs - a.clientMs)
    .slice(0, Math.max(1, Math.ceil(timed.length * fraction)));
  const mean = (of: typeof timed, layer: string) => of.reduce((sum, t) => sum + (t.layers[layer] ?? 0), 0) / of.length;
  const clientMean = slowest.reduce((sum, t) => sum + t.clientMs, 0) / slowest.length;
  const names = [...new Set(timed.flatMap((t) => Object.keys(t.layers)))].filter((n) => n !== 'total');
  const layers = Object.fromEntries(
    names
      .map((name) => [name, mean(slowest, name)] as const)
      .sort((a, b) => b[1] - a[1])
      .map(([name, ms]) => [
        name,
        {
          mean_ms: round(ms),
          share_pct: round((100 * ms) / clientMean),
          every_request_mean_ms: round(mean(timed, name)),
        },
      ]),
  );
  return {
    requests_timed: timed.length,
    untimed: answers.length - timed.length,
    slowest: slowest.length,
    slowest_client_mean_ms: round(clientMean),
    slowest_server_total_mean_ms: round(mean(slowest, 'total')),
    layers,
  };
}

export type LayerShares = NonNullable<ReturnType<typeof slowestLayers>>;
