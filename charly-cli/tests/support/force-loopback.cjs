// charly test support: keeps Node test servers on the loopback interface.
//
// Reference MCP servers call `listen(PORT)` with no host, which binds every interface.
// Preloaded with NODE_OPTIONS="--require /abs/path/force-loopback.cjs", this wraps
// net.Server.prototype.listen so a TCP listen without a host (or with any host) binds
// 127.0.0.1 instead. Unix sockets, file descriptors and handles pass through untouched.
'use strict';
const net = require('net');

const LOOPBACK = '127.0.0.1';
const listen = net.Server.prototype.listen;

function isPort(value) {
  return value === undefined || typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value));
}

net.Server.prototype.listen = function forceLoopbackListen(...args) {
  const first = args[0];
  if (typeof first === 'function') {
    // listen(callback): an ephemeral port.
    args.unshift(0, LOOPBACK);
  } else if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
    // listen(options[, callback]): only TCP options get a host.
    const tcp = !('fd' in first) && !('handle' in first) && !('_handle' in first) && !first.path;
    if (tcp) args[0] = { ...first, host: LOOPBACK };
  } else if (isPort(first)) {
    // listen(port[, host][, backlog][, callback])
    if (args[0] === undefined) args[0] = 0;
    if (typeof args[1] === 'string') args[1] = LOOPBACK;
    else args.splice(1, 0, LOOPBACK);
  }
  return listen.apply(this, args);
};
