// Tells browsergate of each permission a session's page asks for: the
// DevTools protocol of Chromium 156 reports no permission request (no
// event in any domain), so the page's own calls are where a request can be
// seen. It runs in the page's world before any of the page's scripts, and
// everything it uses is taken then, so a page that redefines a built-in
// later does not change what it calls; the report goes through a binding
// (BINDING) that it takes out of the page's sight first.
//
// It decides nothing where the session has a browser context of its own:
// there the browser answers each request from the context's overrides
// (denied unless [browser.permissions] grants it), whatever this script
// does, and a page that goes around it (or calls the binding itself) can
// only leave a request out of the record, or add one. In the user's own
// context (DENY true) the overrides are not browsergate's to set: there
// the documents' Permissions-Policy header denies what it covers, and
// this script answers the rest (notifications, push, keyboard and pointer
// lock, persistent storage) with a denial before the browser is asked.
(() => {
  const deny = DENY;
  const report = globalThis[BINDING];
  try { delete globalThis[BINDING]; } catch (e) {}
  const apply = Reflect.apply;
  const define = Object.defineProperty;
  const describe = Object.getOwnPropertyDescriptor;
  const Err = DOMException;
  const reject = (n, m) => Promise.reject(new Err(m, n));
  const resolved = v => Promise.resolve(v);
  const where = () => { try { return '' + location.href; } catch (e) { return ''; } };
  const tell = name => {
    if (typeof report === 'function') try { apply(report, globalThis, [name + ' ' + where()]); } catch (e) {}
  };
  const later = f => { try { setTimeout(f, 0); } catch (e) {} };
  const denied = 'permission denied by browsergate';

  // wrap replaces a method: it tells of the request, then lets the
  // browser answer (or, when deny or always, answers with denial).
  const wrap = (obj, key, name, denial, always) => {
    if (!obj) return;
    const d = describe(obj, key);
    if (!d || typeof d.value !== 'function') return;
    const orig = d.value;
    const refuse = (deny || always === true) && denial;
    const f = {[key](...args) {
      tell(typeof name === 'function' ? apply(name, this, [args]) : name);
      if (refuse) return apply(denial, this, args);
      return apply(orig, this, args);
    }}[key];
    try { define(obj, key, refuse ? {value: f, writable: false, configurable: false, enumerable: d.enumerable} : {...d, value: f}); } catch (e) {}
  };
  const proto = n => { const c = globalThis[n]; return c && c.prototype; };

  const geoDenial = function (ok, fail) {
    later(() => { if (typeof fail === 'function') fail({code: 1, message: 'User denied Geolocation', PERMISSION_DENIED: 1, POSITION_UNAVAILABLE: 2, TIMEOUT: 3}); });
    return 0;
  };
  wrap(proto('Geolocation'), 'getCurrentPosition', 'geolocation', geoDenial);
  wrap(proto('Geolocation'), 'watchPosition', 'geolocation', geoDenial);

  const media = args => {
    const c = args[0] || {};
    const names = [];
    try { if (c.video) names.push('camera'); if (c.audio) names.push('microphone'); } catch (e) {}
    return names.join(',') || 'camera,microphone';
  };
  const notAllowed = () => reject('NotAllowedError', denied);
  wrap(proto('MediaDevices'), 'getUserMedia', media, notAllowed);
  wrap(proto('MediaDevices'), 'getDisplayMedia', 'display-capture', notAllowed);
  // The older, callback-style ways to the camera and microphone.
  const mediaDenial = function (constraints, ok, fail) {
    later(() => { if (typeof fail === 'function') fail(new Err(denied, 'NotAllowedError')); });
  };
  wrap(proto('Navigator'), 'webkitGetUserMedia', media, mediaDenial);
  wrap(proto('Navigator'), 'getUserMedia', media, mediaDenial);
  // The device choosers (WebHID, WebUSB, Web Serial, Web Bluetooth) are no
  // permission: no override answers them, in any mode, and a chooser
  // would wait for someone to pick a device. They are refused in every
  // mode, as if no device had been picked.
  const noDevice = () => reject('NotFoundError', 'No device selected: device choosers are refused by browsergate');
  wrap(proto('HID'), 'requestDevice', 'hid', noDevice, true);
  wrap(proto('USB'), 'requestDevice', 'usb', noDevice, true);
  wrap(proto('Serial'), 'requestPort', 'serial', noDevice, true);
  wrap(proto('Bluetooth'), 'requestDevice', 'bluetooth', noDevice, true);
  wrap(proto('Clipboard'), 'read', 'clipboard-read', notAllowed);
  wrap(proto('Clipboard'), 'readText', 'clipboard-read', notAllowed);
  wrap(proto('Clipboard'), 'write', 'clipboard-write', notAllowed);
  wrap(proto('Clipboard'), 'writeText', 'clipboard-write', notAllowed);
  wrap(proto('Navigator'), 'requestMIDIAccess', 'midi', notAllowed);
  wrap(proto('WakeLock'), 'request', 'screen-wake-lock', notAllowed);
  wrap(proto('Document'), 'requestStorageAccess', 'storage-access', notAllowed);
  wrap(proto('Document'), 'requestStorageAccessFor', 'top-level-storage-access', notAllowed);
  wrap(globalThis, 'getScreenDetails', 'window-management', notAllowed);
  wrap(globalThis, 'queryLocalFonts', 'local-fonts', notAllowed);
  wrap(globalThis.IdleDetector, 'requestPermission', 'idle-detection', () => resolved('denied'));
  wrap(proto('PushManager'), 'subscribe', 'push', notAllowed);
  wrap(proto('Keyboard'), 'lock', 'keyboard-lock', notAllowed);
  wrap(proto('Element'), 'requestPointerLock', 'pointer-lock', notAllowed);
  wrap(proto('StorageManager'), 'persist', 'persistent-storage', () => resolved(false));
  const sensors = [['Accelerometer', 'accelerometer'], ['Gyroscope', 'gyroscope'], ['Magnetometer', 'magnetometer'], ['AmbientLightSensor', 'ambient-light-sensor']]
    .filter(s => typeof globalThis[s[0]] === 'function').map(s => [globalThis[s[0]], s[1]]);
  wrap(proto('Sensor'), 'start', function () {
    for (const [cls, name] of sensors) if (this instanceof cls) return name;
    return 'accelerometer';
  }, function () {});

  const N = globalThis.Notification;
  if (typeof N === 'function') {
    const ask = function requestPermission(callback) {
      if (typeof callback === 'function') later(() => callback('denied'));
      return resolved('denied');
    };
    wrap(N, 'requestPermission', 'notifications', ask);
    if (deny) {
      // The user may have let the site show notifications: a session's
      // page does not.
      try { define(N, 'permission', {get: () => 'denied', configurable: false}); } catch (e) {}
      const Denied = function Notification() {
        tell('notifications');
        throw new TypeError("Failed to construct 'Notification': " + denied);
      };
      Denied.prototype = N.prototype;
      try {
        define(Denied, 'permission', {get: () => 'denied', configurable: false});
        define(Denied, 'requestPermission', {value: N.requestPermission, writable: false, configurable: false});
        define(globalThis, 'Notification', {value: Denied, writable: false, configurable: false});
      } catch (e) {}
    }
  }
  if (deny) {
    // What no Permissions-Policy covers reads as denied, as a request for
    // it is answered.
    const uncovered = {__proto__: null};
    for (const n of ['notifications', 'push', 'keyboard-lock', 'pointer-lock', 'persistent-storage',
      'background-sync', 'periodic-background-sync', 'background-fetch', 'nfc', 'system-wake-lock',
      'top-level-storage-access', 'web-app-installation', 'fullscreen']) uncovered[n] = true;
    const query = describe(Permissions.prototype, 'query');
    if (query && typeof query.value === 'function') {
      const orig = query.value;
      try {
        define(Permissions.prototype, 'query', {value: function query(desc) {
          let name = '';
          try { name = '' + desc.name; } catch (e) {}
          if (uncovered[name] === true) return resolved({name, state: 'denied', onchange: null, addEventListener() {}, removeEventListener() {}});
          return apply(orig, this, [desc]);
        }, writable: false, configurable: false});
      } catch (e) {}
    }
  }
})();
