// Preloaded into Node.js MCP servers started by the tests (node --require):
// servers that call listen(port) with no host would bind every interface;
// the tests may only open ports on 127.0.0.1, so pin the host.
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    if (typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  }
  return listen.apply(this, args);
};
