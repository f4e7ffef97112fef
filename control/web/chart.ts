/**
 * Charts rendered to SVG on the server with Apache ECharts (SSR mode), so pages carry no chart script. The SVG
 * is made CSP-clean: ECharts' inline `style` attributes become presentation attributes and its hover-only
 * `<style>` block is dropped (the page CSP allows no inline style). Chart text comes only from our own numbers
 * and labels, and ECharts escapes text it writes.
 */
import * as echarts from 'echarts';
import { raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

export interface Series {
  name: string;
  data: number[];
  kind?: 'bar' | 'line';
}

export interface ChartSpec {
  /** Accessible description of what the chart shows (also the figure caption). */
  title: string;
  categories: string[];
  series: Series[];
  /** Formats axis values (e.g. cents to dollars). */
  unit?: 'cents' | 'ms' | 'percent' | 'count';
  width?: number;
  height?: number;
  /** Shown instead of empty axes when every value is 0 or there is nothing to plot (default "No calls yet."). */
  empty?: string;
}

const PRESENTATION = new Set(['font-size', 'font-family', 'font-weight', 'fill', 'stroke', 'opacity']);

function cspCleanSvg(svg: string): string {
  return svg
    .replace(/<style\s*>[\s\S]*?<\/style>/g, '')
    .replace(/\secmeta_[a-z_]+="[^"]*"/g, '')
    .replace(/\sstyle="([^"]*)"/g, (_, decls: string) =>
      decls
        .split(';')
        .map((d) => d.split(':').map((s) => s.trim()))
        .filter(([k, v]) => k && v && PRESENTATION.has(k))
        .map(([k, v]) => ` ${k}="${v!.replace(/px$/, '')}"`)
        .join(''),
    );
}

function formatter(unit: ChartSpec['unit']): (v: number) => string {
  if (unit === 'cents') return (v) => `$${(v / 100).toFixed(2)}`;
  if (unit === 'ms') return (v) => `${v} ms`;
  if (unit === 'percent') return (v) => `${v}%`;
  return (v) => String(v);
}

/** The chart as an inline `<svg role="img">` with its title as the accessible name. */
export function renderChart(spec: ChartSpec): HtmlEscapedString {
  const nothing = spec.categories.length === 0 || spec.series.every((s) => s.data.every((v) => !v));
  if (nothing)
    return raw(
      `<figure class="chart empty"><p>${escapeAttr(spec.empty ?? 'No calls yet.')}</p><figcaption class="hint">${escapeAttr(spec.title)}</figcaption></figure>`,
    );
  const chart = echarts.init(null, null, {
    renderer: 'svg',
    ssr: true,
    width: spec.width ?? 640,
    height: spec.height ?? 240,
  });
  try {
    chart.setOption({
      animation: false,
      color: ['#0b5cad', '#b35900', '#116329'],
      textStyle: { fontFamily: 'sans-serif', color: '#1b1f24' },
      grid: { left: 64, right: 16, top: spec.series.length > 1 ? 36 : 16, bottom: 32 },
      legend: spec.series.length > 1 ? { top: 0, textStyle: { color: '#1b1f24' } } : undefined,
      xAxis: { type: 'category', data: spec.categories, axisLabel: { color: '#57606a' } },
      yAxis: { type: 'value', axisLabel: { color: '#57606a', formatter: formatter(spec.unit) }, minInterval: 1 },
      series: spec.series.map((s) => ({ name: s.name, type: s.kind ?? 'bar', data: s.data })),
    });
    const svg = cspCleanSvg(chart.renderToSVGString()).replace(
      /^<svg /,
      `<svg role="img" aria-label="${escapeAttr(spec.title)}" `,
    );
    return raw(`<figure class="chart">${svg}<figcaption class="hint">${escapeAttr(spec.title)}</figcaption></figure>`);
  } finally {
    chart.dispose();
  }
}

function escapeAttr(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
