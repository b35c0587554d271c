"""Which versions of each tool a reader was tested on: the samples its tests read (``perfclaims formats``).

"fixture after source" means no real file was found and the test file was written after the tool's source code at
the commit named in the test; every other entry is a real output (provenance in ``tests/data/formats/PROVENANCE.md``
or ``/work/shared/samples/PROVENANCE.md``).
"""

from __future__ import annotations

TESTED_ON = {
    "h200-steps-jsonl": "perfclaims' own H200 step-timing sweep (data/raw/h200)",
    "published-table": "perfclaims transcriptions of published tables (data/raw/published)",
    "guidellm-report": "GuideLLM 0.2-era layout (neuralmagic/guidellm test asset @16270d2b); 0.5.0.dev0 report",
    "guidellm-report-yaml": "GuideLLM 0.2-era layout as YAML (neuralmagic/guidellm test asset @16270d2b)",
    "inference-perf-lifecycle": "inference-perf KubeCon NA 2025 demo reports @7ff81506 (vLLM, 7 rate stages, summary)",
    "inference-perf-prometheus": "inference-perf KubeCon NA 2025 demo Prometheus summaries @7ff81506 (noted, not read)",
    "inferencex-agentx": "InferenceX AgentX aggregate @6c128cd2 (AIPerf 0.8.0 artifacts)",
    "inferencex-agg": "InferenceX utils/process_result.py output @bf030960",
    "inferencex-api": "InferenceX API snapshot (data/raw/inferencex)",
    "inferencex-api-history": "InferenceX API history snapshot (data/raw/inferencex-history)",
    "inferencex-multiturn": "InferenceX multi-turn aggregate @7181314 (vLLM 0.19.1, 1 and 16 users)",
    "inferencex-runner": "InferenceX together_runner baseline record @1aadd1e5",
    "inferencex-trimmed": "InferenceX experimental token-position sweep results @843c6254",
    "aiperf-csv": "AIPerf pre-1.0 (Oct 2025) and 0.8.0",
    "aiperf-json": "AIPerf pre-1.0 records layout and 0.8.0 (schema_version 1.2)",
    "aiperf-jsonl": "AIPerf pre-1.0 and 0.8.0 per-request records",
    "llama-bench-json": "llama.cpp build 5163 (8cf427ff), README run",
    "llama-bench-jsonl": "llama.cpp build 5163 (8cf427ff), README run",
    "llmperf-individual": "LLMPerf token_benchmark_ray.py (RESULTS_VERSION 2023-08-31)",
    "llmperf-summary": "LLMPerf RESULTS_VERSION 2023-08-31 (llmperf-leaderboard)",
    "mlperf-detail": "LoadGen v5.x detail log layout",
    "mlperf-summary": "LoadGen v3.1 (GPT-J), v4.1 (GPT-J), v5.1 (Llama-2-70B) summaries",
    "sglang-bench-serving": "fixture after source (bench_serving @0033168f, 2026 benchmark/serving.py)",
    "sglang-one-batch": "fixture after source (bench_one_batch, 2026 benchmark/one_batch.py)",
    "sglang-one-batch-server": "fixture after source (2026 benchmark/one_batch_server.py); sglang v0.5.13.post1 "
                               "result lines as pasted in two write-ups",
    "trtllm-bench-console": "TensorRT-LLM 1.1.0rc1 report (PR #7104) and a 2025 report (issue #6294), as pasted",
    "trtllm-bench-report": "fixture after source (reporting.py @02499765 and @2787769c)",
    "vllm-sweep-summary": "vLLM 0.25.1 `bench sweep serve` output (er0080/vllm-benchmarking fixtures @57cb02c0)",
    "vllm-latency": "fixture after source (vllm/benchmarks/latency.py @00cae075)",
    "vllm-serve": "vLLM bench serve (recent upstream) and InferenceX's benchmark_serving.py fork; trimmed copies; "
                  "vLLM 0.5.4 benchmark_serving.py with a zero-token request (LambdaLabsML/vllm-benchmark @de55d46e)",
    "vllm-throughput": "fixture after source (vllm/benchmarks/throughput.py)",
    "genai-perf-analyze-csv": "GenAI-Perf analyze export (perf_analyzer @96a4379b)",
    "genai-perf-csv": "GenAI-Perf @4cc7650c",
    "genai-perf-json": "GenAI-Perf @4cc7650c and early-2024 (ns, string numbers)",
    "generic-csv": "perfclaims' own typed-in CSV layout",
    "sglang-serving-console": "fixture after source (bench_serving console block)",
    "vllm-serve-console": "upstream vllm bench serve stdout (2026, spec-decode block)",
}


def tested_on(name: str) -> str:
    return TESTED_ON.get(name, "not recorded")
