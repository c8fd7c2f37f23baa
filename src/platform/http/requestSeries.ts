// Counts a request in the requests counter and the duration histogram through each label set's own entries, without prom-client's per-call label hashing.
import type { Counter, Histogram } from "prom-client";

type Labels = { protocol: string; route: string; status: string };

/** prom-client's table of a metric's label sets (15.x): what `inc` and `observe` write, and a scrape reads. */
interface Table<Entry> {
  hashMap: Record<string, Entry>;
}
interface CounterEntry {
  labels: Labels;
  value: number;
}
interface HistogramEntry {
  labels: Labels;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}

/** One label set's entries, and the tables they were found in (a reset table makes them stale). */
interface Series {
  counterTable: Record<string, CounterEntry>;
  histogramTable: Record<string, HistogramEntry>;
  counted: CounterEntry;
  timed: HistogramEntry;
}

const sameLabels = (a: Labels, b: Labels) => a.protocol === b.protocol && a.route === b.route && a.status === b.status;

/**
 * `requests.inc(labels)` and `duration.observe(labels, seconds)` as one function. Why: prom-client checks the
 * labels and builds their hash string on every call, twice (the counter and the histogram), and looks the new
 * string up in a dictionary (about 3% of a gRPC GetUser's instructions). Here the first request of a label set
 * goes through prom-client's own `inc` and `observe`, which make its entries; later ones add to those entries
 * exactly as prom-client does (the value, the sum, the count, the one bucket that holds the value), found
 * through maps keyed by the label values. A table prom-client replaced (`reset`) sends the next request through
 * prom-client again. A value prom-client refuses (not finite) always goes through it, and is refused the same way.
 * test/unit/requestSeries.test.ts compares the scrape of both ways.
 */
export function requestRecorder(requests: Counter<keyof Labels>, duration: Histogram<keyof Labels>): (protocol: string, route: string, status: string, seconds: number) => void {
  const counterTable = requests as unknown as Table<CounterEntry>;
  const histogramTable = duration as unknown as Table<HistogramEntry>;
  const bounds = (duration as unknown as { upperBounds: readonly number[] }).upperBounds;
  // The bucket keys as prom-client's bucketValues have them (property names: the bounds as strings).
  const boundKeys = bounds.map(String);
  const byProtocol = new Map<string, Map<string, Map<string, Series>>>();

  const slow = (labels: Labels, seconds: number): Series | undefined => {
    requests.inc(labels);
    duration.observe(labels, seconds);
    const counted = Object.values(counterTable.hashMap).find((e) => sameLabels(e.labels, labels));
    const timed = Object.values(histogramTable.hashMap).find((e) => sameLabels(e.labels, labels));
    if (!counted || !timed) return undefined;
    return { counterTable: counterTable.hashMap, histogramTable: histogramTable.hashMap, counted, timed };
  };

  return (protocol, route, status, seconds) => {
    let byRoute = byProtocol.get(protocol);
    if (byRoute === undefined) byProtocol.set(protocol, (byRoute = new Map()));
    let byStatus = byRoute.get(route);
    if (byStatus === undefined) byRoute.set(route, (byStatus = new Map()));
    const series = byStatus.get(status);
    if (series === undefined || series.counterTable !== counterTable.hashMap || series.histogramTable !== histogramTable.hashMap || !Number.isFinite(seconds)) {
      const made = slow({ protocol, route, status }, seconds);
      if (made) byStatus.set(status, made);
      else byStatus.delete(status);
      return;
    }
    series.counted.value += 1;
    const timed = series.timed;
    timed.sum += seconds;
    timed.count += 1;
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= bounds[i]) {
        timed.bucketValues[boundKeys[i]] += 1;
        break;
      }
    }
  };
}
