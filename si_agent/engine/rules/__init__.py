"""The rule engine: the same tools as a model, decided by deterministic rules.

It is the offline default and the fast path in front of a model. Each rule is
conservative: when it is not sure, it asks (a suggestion, or no call, which
makes the controller ask again) rather than guesses.

The rules are chosen by the tools the state offers (``core.actions`` derives
them from the machine), and a rule fires only if its tool is offered:
- ``match_business`` offered (idle, done): accept a pending suggestion
  ("办理"), match a business by keyword or by character-bigram similarity
  (IDF-weighted over the businesses' vocabularies), tell questions from
  requests (``speech_act``: a question is answered, then the business
  recommended; a request starts it); values in the same message are provided
  at once;
- an upload tool offered (a step awaited): a file path for it; values typed
  meanwhile;
- ``provide_field`` offered (collecting): cancel words; values found by the
  validators' extractors, assigned to fields by type, cue words and labels (so
  corrections such as "不对，转出城市是苏州" work); the whole message for the
  awaited field; questions go to ``answer_question``;
- ``confirm_submit``/``retry_submit``/``modify_info``/``redo_step`` (confirming,
  failed): confirm, retry, modify (by label or by a value whose type fits one
  field), redo a step by its label, cancel.

Each decision names the ``Rule`` that fired and a confidence (``SURE`` when a
model could add nothing; never when a correction, negation, hedge or filler cue
of ``engine.cues`` touched it). No value leaves the engine with correction words
in it ("改回张伟" is stored as 张伟).

The package, by concern:

    engine       RuleEngine: picks the rules for the offered tools, over the shared
                 Catalog (re-indexed when its version changes)
    matching     a message to a business: keywords, scattered keywords, IDF bigrams
    idle         match_business offered: questions vs requests, starting a business
    collecting   provide_field offered: values, corrections, a consultation's slots
    switching    another business named while one runs
    talk         small talk, refusals and questions about a field, mid-flow
    steps        an upload awaited; declining an optional step
    confirming   confirming, retrying, modifying, redoing a step
    extraction   field values in a message (candidates assigned to fields)
    corrections  the value a correction frame introduces ("还是改回张伟吧"), and its field
    polarity     options inside a negation ("不要最低档"); no correction words stored
    mentions     the field or step a message names; whether it fits a field whole
    confidence   how sure a decision is
    calls        the tool calls, and the filter that keeps them within the toolset
"""

from si_agent.engine.rules.engine import RuleEngine
from si_agent.engine.rules.matching import (
    ASKED_THRESHOLD,
    MARGIN,
    MATCH_THRESHOLD,
    SCATTERED_SCORE,
    SUGGEST_THRESHOLD,
)

__all__ = [
    "ASKED_THRESHOLD",
    "MARGIN",
    "MATCH_THRESHOLD",
    "SCATTERED_SCORE",
    "SUGGEST_THRESHOLD",
    "RuleEngine",
]
