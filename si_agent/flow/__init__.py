"""The flow: the controller that runs a turn, the turn and its handlers, the job driver.

See docs/architecture.md for the layers and the life of one turn.
"""
