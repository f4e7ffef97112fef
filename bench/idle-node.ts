/**
 * An idle Node process pinned beside the server under test, with the event-loop-delay probe preloaded:
 * its loop delay during a load run is what the machine's scheduling alone costs on that core.
 */
setInterval(() => {}, 1 << 30);
console.log(JSON.stringify({ ready: 'idle-node', url: 'none', port: 0 }));
process.on('SIGTERM', () => process.exit(0));
