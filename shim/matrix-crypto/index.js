'use strict';
// Stand-in for @matrix-org/matrix-sdk-crypto-nodejs. matrix-bot-sdk loads this module eagerly,
// but Reprise never enables encryption, so only names are needed at load time. Any attempt to
// use crypto fails loudly instead of silently sending plaintext.
function unsupported() {
  throw new Error('End-to-end encrypted Matrix rooms are not supported by Reprise yet (crypto binding is a shim).');
}
class Unsupported {
  constructor() {
    unsupported();
  }
}
module.exports = new Proxy(
  {},
  {
    get(_target, prop) {
      if (prop === '__esModule') return false;
      if (prop === 'then') return undefined;
      if (typeof prop === 'symbol') return undefined;
      if (/^[A-Z]/.test(prop)) return Unsupported;
      return unsupported;
    },
  },
);
