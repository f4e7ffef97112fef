-- wrk script: prints exact latency percentiles (microseconds) as one JSON line; headers come from wrk -H.
function done(summary, latency, requests)
  io.write(string.format(
    '{"requests":%d,"durationUs":%d,"statusErrors":%d,"connectErrors":%d,"readErrors":%d,"timeouts":%d,"p50Us":%d,"p90Us":%d,"p99Us":%d,"p999Us":%d,"meanUs":%.1f,"maxUs":%d}\n',
    summary.requests, summary.duration, summary.errors.status, summary.errors.connect, summary.errors.read, summary.errors.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.mean, latency.max))
end
