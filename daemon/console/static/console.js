// The console's list of held calls and live sessions says when the
// daemon's event stream reports a change: a banner asks the operator to
// reload. The page never reloads by itself (buttons must not move under a
// pointer). Nothing else runs here.
(() => {
  const base = location.pathname.replace(/\/+$/, '');
  const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + base + '/events';
  const banner = document.getElementById('changed');
  const watched = new Set(['approval_asked', 'approval_answered', 'session_opened', 'session_ended', 'decision']);
  const connect = () => {
    const ws = new WebSocket(url);
    ws.onmessage = m => {
      try {
        if (watched.has(JSON.parse(m.data).type)) banner.hidden = false;
      } catch (e) { /* not an event */ }
    };
    ws.onclose = e => { if (e.code !== 1008) setTimeout(connect, 5000); };
  };
  if (banner) connect();
})();
