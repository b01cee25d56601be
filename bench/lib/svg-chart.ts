/**
 * A bar chart as a self-contained SVG: panels side by side, each a list of rows, each row a bar per series,
 * and reference lines (a ceiling) across a panel. No fonts, scripts or links to fetch: it renders on GitHub, in
 * an editor's preview and offline. Pure: figures in, text out (bench/lib/result-charts.ts says what is drawn).
 */

export interface Series {
  name: string;
  colour: string;
}
interface Row {
  label: string;
  /** One value per series, in the series' order; null where that series has no figure. */
  values: (number | null)[];
}
interface Panel {
  title: string;
  /** Figures that span decades (a p99 of 12 ms beside one of 18 s) read on a log scale. */
  scale: 'linear' | 'log';
  rows: Row[];
  /** Lines across the panel at a value: a ceiling the bars are read against. */
  lines?: { label: string; value: number }[];
}
export interface Chart {
  title: string;
  subtitle: string;
  series: Series[];
  panels: Panel[];
}

const LABEL_W = 190;
const PLOT_W = 300;
const PANEL_GAP = 40;
const BAR_H = 11;
const ROW_GAP = 10;
const TOP = 78;

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (v: number) =>
  v >= 1000 ? Math.round(v).toLocaleString('en-GB') : v >= 100 ? String(Math.round(v)) : String(+v.toFixed(1));

function scaler(panel: Panel): (v: number) => number {
  const all = [...panel.rows.flatMap((r) => r.values), ...(panel.lines ?? []).map((l) => l.value)].filter(
    (v): v is number => v !== null && v > 0,
  );
  const max = Math.max(1, ...all);
  if (panel.scale === 'linear') return (v) => (Math.max(0, v) / max) * PLOT_W;
  const top = Math.ceil(Math.log10(max));
  const bottom = Math.min(0, Math.floor(Math.log10(Math.min(...all, 1))));
  return (v) => (v <= 0 ? 0 : ((Math.log10(Math.max(v, 10 ** bottom)) - bottom) / (top - bottom)) * PLOT_W);
}

function ticks(panel: Panel, x: (v: number) => number): number[] {
  if (panel.scale === 'log') {
    const out: number[] = [];
    for (let v = 1; x(v) <= PLOT_W + 0.5; v *= 10) out.push(v);
    return out;
  }
  const max = Math.max(...panel.rows.flatMap((r) => r.values.filter((v): v is number => v !== null)), 1);
  const step = 10 ** Math.floor(Math.log10(max));
  const out: number[] = [];
  for (let v = 0; x(v) <= PLOT_W + 0.5; v += step) out.push(v);
  return out;
}

function drawPanel(panel: Panel, series: Series[], left: number): { svg: string; height: number } {
  const x = scaler(panel);
  const rowH = series.length * BAR_H + ROW_GAP;
  const plotLeft = left + LABEL_W;
  const height = panel.rows.length * rowH;
  const parts: string[] = [
    `<text x="${plotLeft}" y="${TOP - 12}" font-weight="bold">${escape(panel.title)}${panel.scale === 'log' ? ' (log scale)' : ''}</text>`,
  ];
  for (const t of ticks(panel, x)) {
    const tx = plotLeft + x(t);
    parts.push(
      `<line x1="${tx}" y1="${TOP}" x2="${tx}" y2="${TOP + height}" stroke="#ddd"/>`,
      `<text x="${tx}" y="${TOP + height + 14}" text-anchor="middle" fill="#666">${fmt(t)}</text>`,
    );
  }
  panel.rows.forEach((row, i) => {
    const y = TOP + i * rowH;
    parts.push(
      `<text x="${plotLeft - 8}" y="${y + (series.length * BAR_H) / 2 + 4}" text-anchor="end">${escape(row.label)}</text>`,
    );
    row.values.forEach((v, s) => {
      const by = y + s * BAR_H;
      if (v === null) {
        parts.push(`<text x="${plotLeft + 4}" y="${by + BAR_H - 2}" fill="#999">not measured</text>`);
        return;
      }
      const w = Math.max(1, x(v));
      parts.push(
        `<rect x="${plotLeft}" y="${by}" width="${w.toFixed(1)}" height="${BAR_H - 2}" fill="${series[s]!.colour}"/>`,
        `<text x="${plotLeft + w + 4}" y="${by + BAR_H - 2}" fill="#333">${fmt(v)}</text>`,
      );
    });
  });
  for (const line of panel.lines ?? []) {
    const lx = plotLeft + x(line.value);
    parts.push(
      `<line x1="${lx}" y1="${TOP - 4}" x2="${lx}" y2="${TOP + height}" stroke="#b00" stroke-dasharray="4 3"/>`,
      `<text x="${lx + 3}" y="${TOP + height + 28}" fill="#b00">${escape(line.label)}</text>`,
    );
  }
  return { svg: parts.join('\n'), height };
}

export function renderChart(chart: Chart): string {
  const panelW = LABEL_W + PLOT_W + 60;
  const width = chart.panels.length * panelW + (chart.panels.length - 1) * PANEL_GAP + 20;
  const drawn = chart.panels.map((p, i) => drawPanel(p, chart.series, 10 + i * (panelW + PANEL_GAP)));
  const height = TOP + Math.max(...drawn.map((d) => d.height)) + 62;
  const legend = chart.series
    .map(
      (s, i) =>
        `<rect x="${10 + i * 230}" y="${height - 16}" width="10" height="10" fill="${s.colour}"/>` +
        `<text x="${24 + i * 230}" y="${height - 7}">${escape(s.name)}</text>`,
    )
    .join('\n');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height + 8}" viewBox="0 0 ${width} ${height + 8}" font-family="sans-serif" font-size="11">
<rect width="100%" height="100%" fill="#fff"/>
<text x="10" y="20" font-size="14" font-weight="bold">${escape(chart.title)}</text>
<text x="10" y="38" fill="#555">${escape(chart.subtitle)}</text>
${drawn.map((d) => d.svg).join('\n')}
${legend}
</svg>
`;
}
