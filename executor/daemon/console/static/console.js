// The console's list of held calls and live sessions reloads when the
// daemon's event stream says something changed, unless the operator is
// typing a note. Nothing else runs here.
(() => {
  const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/events';
  let timer = null;
  const reload = () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      const el = document.activeElement;
      if (el && el.tagName === 'INPUT' && el.value !== '') return;
      location.reload();
    }, 400);
  };
  const connect = () => {
    const ws = new WebSocket(url);
    ws.onmessage = reload;
    ws.onclose = () => setTimeout(connect, 5000);
  };
  connect();
})();
