"""Words for latency distributions, goodput and uncertainty: what each method, basis and count source means, and how
each benchmark tool defines goodput. Fixed text only (no data); the page and the command line use it."""

from __future__ import annotations

METHOD_WORDS = {
    "bootstrap-requests": "percentile bootstrap over the point's successful requests",
    "bootstrap-steps": "percentile bootstrap over the point's repeated step timings",
    "median-spacing": "large-sample interval of the median TPOT; the density at the median is read from the "
                      "summary's own p50–p90 (else p50–p99) spacing, with n requests (an approximation)",
    "normal-e2e-spacing": "normal interval with relative error σ(E2E) / (mean E2E × √n), σ read from the "
                          "p50–p99 spacing as for a normal distribution (an approximation)",
    "log-quadrature": "ratio of two independent intervals, their log half-widths added in quadrature",
    "none": "no interval: the point lacks what any method needs (requests, a spread or n)",
}

N_SOURCE_WORDS = {
    "requests": "counted from its per-request rows (successful requests)",
    "file": "as its file states",
    "tool-default": "the tool's documented default, not recorded in the file (InferenceX single-node runs: 10 × "
                    "concurrency)",
    "unknown": "unknown",
}

BASIS_WORDS = {
    "requests": "per request: each request's own TTFT, TPOT, ITL and E2E against every term; failed requests "
                "count as not met",
    "summary-lower-bound": "from the summary percentiles: a lower bound on the share (p99 within the limit: at "
                           "least 99%; only p50: at least 50%; several terms: 1 − Σ of what each misses)",
    "none": "no latency number that any term needs",
}

# How each tool defines goodput, where it differs from perfclaims' per-request definition.
TOOL_DEFINITIONS = {
    "vllm": "vLLM `--goodput ttft:MS tpot:MS e2el:MS`: a request is good when every named per-request value is "
            "within its limit (TPOT per request = (E2E − TTFT) / (output tokens − 1)); it reports good requests "
            "per second of the run (`request_goodput`), not a share, and no goodput tok/s.",
    "aiperf": "AIPerf `--goodput \"time_to_first_token:MS inter_token_latency:MS request_latency:MS\"`: the same "
              "per-request test (its inter_token_latency is per-request TPOT); it reports good requests per second.",
    "mlperf": "MLPerf LoadGen (Server scenario): no per-request goodput; a run is valid when its p99 TTFT and p99 "
              "TPOT meet the benchmark's limits — the run-level check perfclaims reports as `percentiles_met` for "
              "terms that name a percentile (`ttft_p99<=2s`).",
    "llmperf": "LLMPerf: no goodput; perfclaims applies the per-request test to its individual responses (its "
               "TTFT and E2E; TPOT recomputed as (E2E − TTFT) / (output tokens − 1)).",
    "inferencex": "InferenceX: summaries only (no per-request rows in the shipped data); the share is the "
                  "summary lower bound.",
}
