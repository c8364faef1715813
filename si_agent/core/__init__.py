"""The pure vocabulary of a turn, shared by the flow and the engines.

Nothing here imports the flow, the engines or the server: only the config and
session models, the validators and the texts. ``catalog`` holds the one shared
mapping of businesses that discovery updates and every engine reads.
"""
