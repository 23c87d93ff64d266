/**
 * Charts as inline SVG built on the server from numbers only (no script, no inline style: the
 * colours are classes of ui.css, so light and dark both read). Labels pass through {@link h}.
 */
import { h, type Html } from './ui-html.js';

export interface Series {
  /** ui.css class of its colour (`k-instant`). */
  cls: string;
  label: string;
}

/** The tallest a chart is drawn (px): it never grows with the page's width. */
export const CHART_MAX_HEIGHT = 200;

/**
 * A stacked bar per column (a day, a week); `values[i][s]` is series `s` of column `i`. Stack
 * only series that partition one count (answers by kind); counts that overlap (answers and the
 * resolves among them) each get a chart of their own. Drawn at its own pixel size — `width` and
 * `height` attributes, scaled down only to fit a narrow screen — so one column is not stretched
 * into a bar as tall as the page is wide.
 */
export function stackedBars(opts: {
  title: string;
  columns: readonly string[];
  series: readonly Series[];
  values: readonly (readonly number[])[];
  height?: number;
}): Html {
  const { columns, series, values } = opts;
  const height = Math.min(CHART_MAX_HEIGHT, opts.height ?? 160);
  // Columns share about 480 px, each between 8 and 40 px wide (bar and gap).
  const step = Math.max(8, Math.min(40, Math.floor(480 / Math.max(1, columns.length))));
  const bar = Math.max(4, Math.round(step * 0.7));
  const left = 28;
  const width = Math.max(200, left + columns.length * step + 4);
  const max = Math.max(1, ...values.map((col) => col.reduce((a, b) => a + b, 0)));
  const scale = (height - 20) / max;
  const rects: Html[] = [];
  columns.forEach((label, i) => {
    let y = height - 14;
    series.forEach((s, k) => {
      const v = values[i]?.[k] ?? 0;
      if (v <= 0) return;
      const hgt = Math.max(1, v * scale);
      y -= hgt;
      rects.push(
        h`<rect class="${s.cls}" x="${left + i * step}" y="${y.toFixed(1)}" width="${bar}" height="${hgt.toFixed(1)}"><title>${label} · ${s.label}: ${v}</title></rect>`,
      );
    });
  });
  const first = columns[0] ?? '';
  const last = columns[columns.length - 1] ?? '';
  return h`<svg class="chart" role="img" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" data-series="${series.map((s) => s.label).join(' | ')}" aria-label="${opts.title}">
<title>${opts.title}</title>
<line class="axis" x1="${left - 2}" y1="${height - 14}" x2="${width}" y2="${height - 14}"></line>
<text class="tick" x="0" y="10">${max}</text><text class="tick" x="0" y="${height - 14}">0</text>
${rects}
<text class="tick" x="${left}" y="${height - 2}">${first}</text>${
    last !== first ? h`<text class="tick" x="${width - 4}" y="${height - 2}" text-anchor="end">${last}</text>` : ''
  }
</svg>`;
}

/** A legend for {@link stackedBars}. */
export function legend(series: readonly Series[]): Html {
  return h`<ul class="legend">${series.map((s) => h`<li><svg width="10" height="10" aria-hidden="true"><rect class="${s.cls}" width="10" height="10"></rect></svg> ${s.label}</li>`)}</ul>`;
}
