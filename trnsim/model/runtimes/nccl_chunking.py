"""How NCCL cuts an NVLS collective into chunks, and the pipeline fill that costs.

NCCL's tuner prices a call as ``latency + bytes / bandwidth`` (:mod:`~trnsim.model.runtimes.nccl`):
the bandwidth from the first byte. An NVLS all-reduce runs as ``concurrent ops = NVLS channels x
heads`` pipelines, each moving its share of the buffer chunk by chunk through the switches (a
reduce-load, then a multicast store). Before its last chunk is done, a pipeline's first chunks must
pass the stages ahead of them: a fill of ``NVLS_FILL_CHUNKS`` chunk times, where a chunk time is the
chunk at the pipeline's share of the bandwidth. NCCL itself picks the chunk by size
(src/enqueue.cc, calcCollChunking; NCCL 2.30.7): the NVLS chunk size (NCCL_NVLS_CHUNKSIZE, 128 KiB,
src/transport/nvls.cc) halved to 64 KiB below ``64 x ops x chunk`` bytes, to 32 KiB below ``8 x ops x
chunk`` and to 16 KiB below ``2 x ops x chunk``; a pipeline whose share is smaller than a chunk moves
its share. NVLS channels are 16 on Hopper, 24 on one Blackwell NVLink domain and 32 on several
(NVLS_NCHANNELS_SM90 / _SM100_NVL / _SM100, src/transport/nvls.cc); the heads are the NVLS graph's
channels (src/graph/connect.cc, connectNvls).

Assumed: ``NVLS_FILL_CHUNKS = 2``, one chunk time for each stage after the first (the reduce-load and
the multicast store). It is fitted to the 8x H200 NVLS all-reduce curve (G9 in the validation set:
every size from 2 to 64 MiB, where the fill is visible); with it the tuner's time follows the other
published NVLS curves (p5 8x H100, NCCL's default choice; 8x H100 NVLS) within 10% from 1 MiB.

>>> nvls_chunk_bytes(1 << 30, 128)
131072
>>> nvls_chunk_bytes(8 << 20, 128), nvls_chunk_bytes(1 << 20, 128)
(32768, 16384)
>>> round(nvls_fill_us(64 << 20, 16 * 8, 274.0), 2)  # 64 KiB chunks over 128 pipelines at 274 GB/s
61.23
"""

NVLS_CHUNK_BYTES = 128 * 1024  # NCCL_NVLS_CHUNKSIZE's default (src/transport/nvls.cc)
NVLS_FILL_CHUNKS = 2  # assumption (fitted to G9): chunk times a pipeline waits before its last chunk


def nvls_channels(compute_capability: int, n_nodes: int) -> int:
    """NCCL's default NVLS channel count (CTAs): 16 on Hopper, 24 on one Blackwell NVLink domain, 32
    on several (src/transport/nvls.cc)."""
    if compute_capability >= 100:
        return 32 if n_nodes > 1 else 24
    return 16


def nvls_chunk_bytes(size_bytes: int, concurrent_ops: int, chunk: int = NVLS_CHUNK_BYTES) -> int:
    """NCCL's NVLS chunk for a buffer of ``size_bytes`` over ``concurrent_ops`` pipelines
    (calcCollChunking, src/enqueue.cc)."""
    if size_bytes < 64 * concurrent_ops * chunk and chunk > 65536:
        chunk = 65536
    if size_bytes < 8 * concurrent_ops * chunk and chunk > 32768:
        chunk = 32768
    if size_bytes < 2 * concurrent_ops * chunk and chunk > 16384:
        chunk = 16384
    return chunk


def nvls_fill_us(
    size_bytes: int, concurrent_ops: int, algbw_gbps: float, fill_chunks: float = NVLS_FILL_CHUNKS
) -> float:
    """The pipeline fill of an NVLS call, microseconds: ``fill_chunks`` chunk times, a chunk time
    being the chunk (or a pipeline's whole share, when smaller) at ``algbw_gbps / concurrent_ops``."""
    if size_bytes <= 0 or algbw_gbps <= 0:
        return 0.0
    share = -(-size_bytes // concurrent_ops)
    chunk = min(nvls_chunk_bytes(size_bytes, concurrent_ops), share)
    return fill_chunks * chunk * concurrent_ops / (1000 * algbw_gbps)
