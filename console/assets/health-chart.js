// Draws an endpoint's delivery series (data-series on the canvas) with Chart.js: attempts per
// interval as stacked bars (answered 2xx, failed) and the success rate as a line on its own axis.
// The same figures are in the page as text and as a table, so the chart is an aid, not the only source.
/* global Chart */
document.addEventListener('DOMContentLoaded', () => {
  for (const canvas of document.querySelectorAll('canvas[data-series]')) {
    const points = JSON.parse(canvas.dataset.series);
    const label = (t) => {
      const d = new Date(t).toISOString();
      return points.length > 48 ? `${d.slice(5, 10)} ${d.slice(11, 16)}` : d.slice(11, 16);
    };
    new Chart(canvas, {
      data: {
        labels: points.map((p) => label(p.t)),
        datasets: [
          {
            type: 'line',
            label: 'Success rate (%)',
            data: points.map((p) => p.rate),
            yAxisID: 'rate',
            borderColor: '#1f5fbf',
            backgroundColor: '#1f5fbf',
            spanGaps: false,
            pointRadius: 3,
          },
          {
            type: 'bar',
            label: 'Answered 2xx',
            data: points.map((p) => p.succeeded),
            yAxisID: 'count',
            backgroundColor: '#5aa469',
            stack: 'attempts',
          },
          {
            type: 'bar',
            label: 'Failed',
            data: points.map((p) => p.attempts - p.succeeded),
            yAxisID: 'count',
            backgroundColor: '#c8553d',
            stack: 'attempts',
          },
        ],
      },
      options: {
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: 'index', intersect: false },
        scales: {
          x: { stacked: true, title: { display: true, text: 'Interval start (UTC)' } },
          count: {
            type: 'linear',
            position: 'left',
            stacked: true,
            beginAtZero: true,
            ticks: { precision: 0 },
            title: { display: true, text: 'Attempts' },
          },
          rate: {
            type: 'linear',
            position: 'right',
            min: 0,
            max: 100,
            grid: { drawOnChartArea: false },
            title: { display: true, text: 'Success rate (%)' },
          },
        },
      },
    });
  }
});
