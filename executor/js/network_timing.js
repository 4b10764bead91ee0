// The navigation and resource timing entries of the page, summarised.
(() => {
  const r = x => Math.round(x);
  const nav = performance.getEntriesByType('navigation')[0];
  const out = {navigation: nav ? {url: nav.name, ttfb_ms: r(nav.responseStart), dom_content_loaded_ms: r(nav.domContentLoadedEventEnd), load_ms: r(nav.loadEventEnd), transfer_bytes: nav.transferSize} : null, resources: []};
  for (const e of performance.getEntriesByType('resource').slice(0, 200)) {
    out.resources.push({url: e.name, type: e.initiatorType, start_ms: r(e.startTime), duration_ms: r(e.duration), transfer_bytes: e.transferSize});
  }
  return out;
})()
