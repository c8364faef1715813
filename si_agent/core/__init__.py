"""The pure vocabulary of a turn: states, the machine, the tools, decisions, the catalog.

Nothing here does I/O or imports the flow, the engines, the server or an
executor; it imports only the config and session models, the validators and
the texts. Both the engines (``si_agent.engine``) and the flow
(``si_agent.flow``) are written in these words.

- ``state``: ``State`` (the one home of state names) and ``FieldStatus``;
- ``machine``: the ``transitions`` machine that moves the state;
- ``actions``: the tool/action table, its argument models and JSON Schemas;
- ``decision``: ``Decision``, ``ToolCall``, ``SessionView``, the ``IntentEngine`` protocol;
- ``consult``: a consultation's plan (pure functions over its slots);
- ``catalog``: the one shared ``Catalog`` of businesses.
"""
