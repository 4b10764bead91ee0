// Removes the WebRTC constructors from every frame of a session's pages:
// WebRTC sends STUN over UDP, which no HTTP proxy sees.
(() => {
  for (const n of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel', 'RTCIceCandidate']) {
    try { Object.defineProperty(window, n, {value: undefined, writable: false, configurable: false}); } catch (e) {}
  }
})()
