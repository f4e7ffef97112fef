import { describe, expect, it } from 'vitest';
import { renderChart } from '../../../control/web/chart.js';

describe('charts explain an empty window instead of drawing empty axes', () => {
  it('says "No calls yet." when every value is 0 or there is nothing to plot', () => {
    for (const spec of [
      { title: 'Calls per day', categories: ['a', 'b'], series: [{ name: 'calls', data: [0, 0] }] },
      { title: 'Calls per day', categories: [], series: [{ name: 'calls', data: [] }] },
    ]) {
      const html = String(renderChart(spec));
      expect(html).toContain('No calls yet.');
      expect(html).not.toContain('<svg');
    }
  });

  it('draws an accessible SVG when there is data', () => {
    const html = String(
      renderChart({ title: 'Calls per day', categories: ['a'], series: [{ name: 'calls', data: [3] }] }),
    );
    expect(html).toContain('<svg role="img" aria-label="Calls per day"');
  });
});
