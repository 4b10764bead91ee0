// In the user's browser context no egress proxy stands behind request
// interception, so the session's pages (every frame) lose what would reach
// the network around it: shared and service workers (top-level targets
// the user's own pages share, which the guard cannot tell apart as the
// session's) and WebTransport (QUIC over UDP, which nothing intercepts).
(() => {
  for (const n of ['SharedWorker', 'WebTransport']) {
    try { Object.defineProperty(window, n, {value: undefined, writable: false, configurable: false}); } catch (e) {}
  }
  try { Object.defineProperty(Navigator.prototype, 'serviceWorker', {get: () => undefined, configurable: false}); } catch (e) {}
})()
