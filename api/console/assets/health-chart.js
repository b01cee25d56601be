// Draws each endpoint's success-rate series (data-series on the canvas) with Chart.js. The same
// figures are in the page as text and as a table, so the chart is an aid, not the only source.
/* global Chart */
document.addEventListener('DOMContentLoaded', () => {
  for (const canvas of document.querySelectorAll('canvas[data-series]')) {
    const points = JSON.parse(canvas.dataset.series);
    new Chart(canvas, {
      type: 'line',
      data: {
        labels: points.map((p) => new Date(p.t).toISOString().slice(11, 16) + ' UTC'),
        datasets: [{
          label: 'Success rate (%)',
          data: points.map((p) => p.rate),
          borderColor: '#1f5fbf',
          backgroundColor: '#1f5fbf',
          spanGaps: false,
          pointRadius: 3,
        }],
      },
      options: {
        maintainAspectRatio: false,
        animation: false,
        scales: { y: { min: 0, max: 100, title: { display: true, text: '% of attempts answered 2xx' } } },
        plugins: {
          tooltip: { callbacks: { afterLabel: (item) => `${points[item.dataIndex].attempts} attempts` } },
        },
      },
    });
  }
});
